"""Judge answers cut at the answer budget, counted from the samples rows and checked against results.json.

Each target and keep entry of a samples row written by this harness lists, in ``cut_answers``, the names of its
judge answers whose call ended at the token budget (``finish_reason`` "length"). The per-record count is:

    cut judge answers = the number of names in ``cut_answers`` over every target and keep entry of every
    non-excluded row,

that is, one per place a cut answer is recorded. An answer recorded in several places (a guess on the original
record reused from the response cache by several rows, or by several runs) counts once in each row that records
it, so the count is a pure function of the rows and never depends on the order calls were made in.

``results.json`` records something else: ``usage.judge.truncated`` (summed over every invocation in
``usage_cumulative``) counts *fresh* calls whose answer was cut; a cached answer is not counted there. The two are
related by what the same usage records (``asked``, ``cached``, ``failed``) and by the number of judge answers the
rows hold:

* every fresh cut answer is recorded in a row unless the run asked more than the rows hold, so
  ``truncated <= flagged + (asked - failed - answers in the rows)``;
* when no answer came from the cache (``cached`` 0) and every answered question is recorded once
  (``asked - failed`` equals the answers in the rows), the two counts are equal.

:func:`cut_problems` checks both when the rows carry the flags and the usage carries those counters (never for a
run with an invocation ended by a kill, whose last calls may be missing from the usage). Rows without the field
(written before it existed) fall back to the recorded count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from privasis_bench.protocol.verdicts import KEEP_ANSWER_FIELDS, TARGET_ANSWER_FIELDS


@dataclass(frozen=True)
class RowCuts:
    """What the rows say about cut judge answers (``flagged`` None: some entry does not carry ``cut_answers``)."""

    flagged: int | None
    answers: int  # judge answers the rows record (one per non-null answer field)


@dataclass(frozen=True)
class RecordedUsage:
    """The judge usage results.json records over the whole run (every invocation)."""

    truncated: int
    asked: int | None
    cached: int | None
    failed: int | None
    killed_invocations: int


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
    """Every ``cut_answers`` that names something other than an answer its entry records (one line each)."""
    problems = []
    for row in rows:
        rid = str(row.get("record_id"))[:80]
        for kind, item, fields in _entries(row):
            cut = item.get("cut_answers")
            if not isinstance(cut, list):
                continue
            where = f"record {rid} {'target' if kind == 'targets' else 'keep'}:{str(item.get('name'))[:60]}"
            if len(set(map(str, cut))) != len(cut):
                problems.append(f"{where}: cut_answers names an answer twice")
            bad = [str(name)[:40] for name in cut if name not in fields or item.get(name) is None]
            if bad:
                problems.append(f"{where}: cut_answers names {', '.join(bad)}, not an answer this entry records")
    return problems


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def recorded_usage(results: Mapping[str, Any]) -> RecordedUsage:
    """The judge usage of the whole run: ``usage_cumulative.total`` when recorded, else the last invocation's."""
    total = (results.get("usage_cumulative") or {}).get("total") or {}
    usage = total.get("usage") if isinstance(total.get("usage"), Mapping) else results.get("usage") or {}
    judge = usage.get("judge") if isinstance(usage.get("judge"), Mapping) else {}
    return RecordedUsage(truncated=_count(judge.get("truncated")) or 0, asked=_count(judge.get("asked")),
                         cached=_count(judge.get("cached")), failed=_count(judge.get("failed")),
                         killed_invocations=_count(total.get("killed_invocations")) or 0)


def recorded_cut_answers(results: Mapping[str, Any]) -> int:
    """Cut judge answers as results.json records them (fresh calls over every invocation)."""
    return recorded_usage(results).truncated


def cut_problems(results: Mapping[str, Any], cuts: RowCuts) -> list[str]:
    """Where the flagged count cannot be what results.json's judge usage records (see the module docstring)."""
    if cuts.flagged is None:
        return []
    usage = recorded_usage(results)
    if usage.asked is None or usage.failed is None or usage.cached is None or usage.killed_invocations:
        return []
    unrecorded = max(0, usage.asked - usage.failed - cuts.answers)
    exact = usage.cached == 0 and usage.asked - usage.failed == cuts.answers
    if exact and usage.truncated != cuts.flagged:
        return [f"usage.judge.truncated is {usage.truncated} but samples.jsonl flags {cuts.flagged} cut judge "
                f"answer(s) in cut_answers (every answer was a fresh call recorded once, so the two must be equal)"]
    if usage.truncated > cuts.flagged + unrecorded:
        return [f"usage.judge.truncated is {usage.truncated} but samples.jsonl flags only {cuts.flagged} cut judge "
                f"answer(s) in cut_answers and the run asked {unrecorded} question(s) more than the rows record"]
    return []
