"""Judge answers cut at the answer budget, counted from the samples rows and checked against results.json.

docs/publishing.md (*Cut judge answers*) states the rule. The rows' count is the number of names in ``cut_answers``
over every target and keep entry of every non-excluded row (one per place a cut answer is recorded, so it depends on
the rows alone); ``results.json``'s ``usage.judge.truncated`` counts *fresh* calls cut over every invocation. With
the same usage's ``asked``, ``cached`` and ``failed``: ``truncated <= flagged + (asked - failed - answers in the
rows)``, with equality when nothing came from the cache and every answered question is recorded once
(:func:`cut_problems`). Nothing switches the checks off silently: rows without ``cut_answers`` are refused
(:func:`flag_problems`), so is a judged run whose usage lacks a count; with a killed invocation the usage is
incomplete, the relations are not applied and the board says the count is self-reported (:func:`self_reported`).
The re-judge (:mod:`.rejudge`) is the independent check on the re-asked sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from privasis_bench.protocol.row_checks import cut_flag_problems
from privasis_bench.protocol.verdicts import KEEP_ANSWER_FIELDS, TARGET_ANSWER_FIELDS


@dataclass(frozen=True)
class RowCuts:
    """What the rows say about cut judge answers (``flagged`` None: some entry does not carry ``cut_answers``)."""

    flagged: int | None
    answers: int  # judge answers the rows record (one per non-null answer field)


@dataclass(frozen=True)
class RecordedUsage:
    """The judge usage results.json records over the whole run (every invocation)."""

    truncated: int | None
    asked: int | None
    cached: int | None
    failed: int | None
    killed_invocations: int
    killed_listed: int | None = None  # invocations listed with ``ended`` "killed" (None: no list recorded)


def _entries(row: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any], tuple[str, ...]]]:
    for kind, fields in (("targets", TARGET_ANSWER_FIELDS), ("keep", KEEP_ANSWER_FIELDS)):
        items = row.get(kind)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping):
                yield kind, item, fields


def row_cuts(rows: Iterable[Mapping[str, Any]]) -> RowCuts:
    """Cut judge answers flagged in the rows and judge answers recorded, over every non-excluded row."""
    flagged, answers, every_entry_says = 0, 0, True
    for row in rows:
        if row.get("status") == "excluded":
            continue
        for _, item, fields in _entries(row):
            answers += sum(item.get(name) is not None for name in fields)
            cut = item.get("cut_answers")
            if isinstance(cut, list):
                flagged += len(cut)
            else:
                every_entry_says = False
    return RowCuts(flagged if every_entry_says else None, answers)


def flag_problems(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every ``cut_answers`` that names something other than an answer its entry records, and every entry that
    records judge answers without one (one line each; the shared row check, strict)."""
    return cut_flag_problems(rows, require=True)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def recorded_usage(results: Mapping[str, Any]) -> RecordedUsage:
    """The judge usage of the whole run: ``usage_cumulative.total`` when recorded, else the last invocation's."""
    total = (results.get("usage_cumulative") or {}).get("total") or {}
    usage = total.get("usage") if isinstance(total.get("usage"), Mapping) else results.get("usage") or {}
    judge = usage.get("judge") if isinstance(usage.get("judge"), Mapping) else {}
    listed = (results.get("usage_cumulative") or {}).get("invocations")
    killed_listed = (sum(isinstance(i, Mapping) and i.get("ended") == "killed" for i in listed)
                     if isinstance(listed, list) else None)
    return RecordedUsage(truncated=_count(judge.get("truncated")), asked=_count(judge.get("asked")),
                         cached=_count(judge.get("cached")), failed=_count(judge.get("failed")),
                         killed_invocations=_count(total.get("killed_invocations")) or 0, killed_listed=killed_listed)


def recorded_cut_answers(results: Mapping[str, Any]) -> int:
    """Cut judge answers as results.json records them (fresh calls over every invocation)."""
    return recorded_usage(results).truncated or 0


def _judged(results: Mapping[str, Any]) -> bool:
    return (results.get("judge") or {}).get("mode") == "model"


def self_reported(results: Mapping[str, Any]) -> list[str]:
    """What the board must label as self-reported about cut judge answers (empty for a run without a judge)."""
    if not _judged(results):
        return []
    out = ["cut judge answers: checked only on the re-judged sample"]
    killed = recorded_usage(results).killed_invocations
    if killed:
        out.append(f"judge usage incomplete ({killed} killed invocation(s)): cut-answer count not confirmed by usage")
    return out


def cut_problems(results: Mapping[str, Any], cuts: RowCuts) -> list[str]:
    """Where the flagged count cannot be what results.json's judge usage records (see the module docstring)."""
    if not _judged(results) or cuts.flagged is None:
        return []  # a missing cut_answers is flag_problems' line, naming the record
    usage = recorded_usage(results)
    missing = [k for k in ("asked", "cached", "failed", "truncated") if getattr(usage, k) is None]
    if missing:
        return [f"usage.judge.{', '.join(missing)}: missing or not a count (every judged run records it; the cut "
                "judge answers cannot be checked without it)"]
    if usage.killed_listed is not None and usage.killed_listed != usage.killed_invocations:
        return [f"usage_cumulative.total.killed_invocations is {usage.killed_invocations} but "
                f"{usage.killed_listed} invocation(s) are listed as killed"]
    if usage.killed_invocations:
        return []  # the usage is incomplete: the re-judge's comparison checks, the board says self-reported
    assert usage.asked is not None and usage.failed is not None and usage.cached is not None
    assert usage.truncated is not None
    unrecorded = max(0, usage.asked - usage.failed - cuts.answers)
    exact = usage.cached == 0 and usage.asked - usage.failed == cuts.answers
    if exact and usage.truncated != cuts.flagged:
        return [f"usage.judge.truncated is {usage.truncated} but samples.jsonl flags {cuts.flagged} cut judge "
                f"answer(s) in cut_answers (every answer was a fresh call recorded once, so the two must be equal)"]
    if usage.truncated > cuts.flagged + unrecorded:
        return [f"usage.judge.truncated is {usage.truncated} but samples.jsonl flags only {cuts.flagged} cut judge "
                f"answer(s) in cut_answers and the run asked {unrecorded} question(s) more than the rows record"]
    return []
