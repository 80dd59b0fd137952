"""The committed re-judge report (``leaderboards/rejudge.json``): read strictly, shown on the board, checked in CI.

``leaderboard verify --report`` writes each entry's re-judge agreement (:func:`merged` keeps the entries it did not
verify, each with its own seed); ``leaderboard build`` reads it as an input and puts each agreement on the board
(:func:`apply_to_board`), so the board is a pure function of ``submissions/`` and this file. The file is untrusted
like every submitted one: bounded strict JSON, every field type- and range-checked, every agreement consistent (per-kind
counts add up, rate and pass rule are what the counts give) and naming an entry on the board the verifier can
re-ask, else one :class:`ReportError` line naming the file and entry. Whether the numbers are *true* is
``verify --check-report``'s question: it re-asks with each entry's seed and compares (:func:`difference`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.bounds import read_json
from privasis_bench.leaderboard.family_api import board_families, family_named
from privasis_bench.leaderboard.rejudge import KINDS, Agreement

REPORT_NAME = "rejudge.json"
REPORT_FORMAT = "privasis-bench/verify-report/1"
#: Largest count or seed a report may state (seeds are 32-bit; counts are bounded far above any real pool).
_MAX_SEED, _MAX_COUNT, _MAX_TEXT = 2**32 - 1, 10**9, 200


class ReportError(PrivasisError):
    """The committed re-judge report is malformed, inconsistent or names an entry that is not on the board."""


@dataclass(frozen=True)
class ReportAgreement:
    """One entry's re-judge outcome as the report states it (checked for consistency, not for truth)."""

    judge: str
    seed: int
    sample_size: int
    pool: int
    asked: int
    agreed: int
    max_disagreements: int
    by_kind: tuple[tuple[str, int, int], ...]  # (kind, asked, agreed), sorted by kind
    unstable: int = 0  # disagreements excused because the judge's own re-asks differ

    def agreement(self) -> Agreement:
        """The same numbers as a :class:`~.rejudge.Agreement` (its rate and pass rule)."""
        return Agreement(seed=self.seed, sample_size=self.sample_size, pool=self.pool, asked=self.asked,
                         agreed=self.agreed, max_disagreements=self.max_disagreements, unstable=self.unstable,
                         by_kind={k: [a, g] for k, a, g in self.by_kind})

    def as_dict(self) -> dict[str, Any]:
        """The board-data form (what ``verify --report`` writes)."""
        return self.agreement().as_dict(self.judge)


@dataclass(frozen=True)
class ReportEntry:
    """One entry of the report: which board entry it names and its agreement (None: not re-judged)."""

    where: str  # "entries[3]"
    name: str
    task: str
    agreement: ReportAgreement | None


@dataclass(frozen=True)
class RejudgeReport:
    """A committed re-judge report."""

    path: Path
    seed: int | None
    entries: tuple[ReportEntry, ...]

    def find(self, name: str, task: str) -> ReportEntry | None:
        """The report's entry for ``name`` on ``task``, or None."""
        return next((e for e in self.entries if e.name == name and e.task == task), None)


def _count(data: dict[str, Any], key: str, where: str, top: int = _MAX_COUNT) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
        raise ReportError(f"{where}.{key} is {str(value)[:40]!r}, not a whole number from 0 to {top}")
    return value


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value or len(value) > _MAX_TEXT or not value.isprintable():
        raise ReportError(f"{where}.{key} is {str(value)[:40]!r}, not a printable text of 1 to {_MAX_TEXT} characters")
    return value


def decision_kinds() -> tuple[str, ...]:
    """Every decision kind a re-judge may count by: the judge's strata and those the families declare
    (``FamilySpec.rejudge_kinds``)."""
    declared = [k for family in board_families() for k in family.rejudge_kinds if k not in KINDS]
    return (*KINDS, *dict.fromkeys(declared))


def _agreement(data: Any, where: str, seed: int | None) -> ReportAgreement:
    if not isinstance(data, dict):
        raise ReportError(f"{where} is not a JSON object")
    kinds = data.get("by_kind")
    known = decision_kinds()
    if not isinstance(kinds, dict) or not set(kinds) <= set(known):
        raise ReportError(f"{where}.by_kind must map decision kinds ({', '.join(known)}) to their counts")
    by_kind = []
    for kind in sorted(kinds):
        part = kinds[kind] if isinstance(kinds[kind], dict) else {}
        asked, agreed = _count(part, "asked", f"{where}.by_kind.{kind}"), _count(part, "agreed", f"{where}.by_kind.{kind}")
        if agreed > asked:
            raise ReportError(f"{where}.by_kind.{kind}: agreed {agreed} is more than asked {asked}")
        by_kind.append((kind, asked, agreed))
    got = ReportAgreement(judge=_text(data, "judge", where), seed=_count(data, "seed", where, _MAX_SEED),
                          sample_size=_count(data, "sample_size", where), pool=_count(data, "pool", where),
                          asked=_count(data, "asked", where), agreed=_count(data, "agreed", where),
                          max_disagreements=_count(data, "max_disagreements", where, 20), by_kind=tuple(by_kind),
                          unstable=_count(data, "unstable", where) if "unstable" in data else 0)
    if got.unstable > got.asked - got.agreed:
        raise ReportError(f"{where}.unstable is {got.unstable}, more than the {got.asked - got.agreed} disagreement(s)")
    if not got.agreed <= got.asked <= got.pool or (got.asked, got.agreed) != (sum(a for _, a, _ in by_kind),
                                                                            sum(g for _, _, g in by_kind)):
        raise ReportError(f"{where}: asked {got.asked}, agreed {got.agreed} and pool {got.pool} do not fit together "
                          "or with the per-kind counts")
    expected = got.as_dict()
    for key in ("rate", "passed"):
        if data.get(key) != expected[key]:
            raise ReportError(f"{where}.{key} is {str(data.get(key))[:40]!r} but the counts give {expected[key]!r}")
    if not expected["passed"]:
        raise ReportError(f"{where}: the re-judge failed; a committed report holds only entries that pass verify")
    return got


def _entry(data: Any, index: int, seed: int | None) -> ReportEntry:
    where = f"entries[{index}]"
    if not isinstance(data, dict):
        raise ReportError(f"{where} is not a JSON object")
    if data.get("ok") is not True:
        raise ReportError(f"{where} ({str(data.get('name'))[:80]}) did not pass verify; a committed report holds only "
                          "entries that pass")
    raw = data.get("agreement")
    agreement = None if raw is None else _agreement(raw, f"{where}.agreement", seed)
    return ReportEntry(where, _text(data, "name", where), _text(data, "task", where), agreement)


def read_report(path: str | Path) -> RejudgeReport:
    """The report at ``path``, read with the bounded strict reader and checked; :class:`ReportError` otherwise."""
    path = Path(path)
    problems: list[str] = []
    data = read_json(path, problems)
    if problems:
        raise ReportError(problems[0])
    try:
        if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
            raise ReportError(f"format is not {REPORT_FORMAT!r} (write it with `leaderboard verify --report`)")
        seed = data.get("rejudge_seed")
        if seed is not None:
            seed = _count(data, "rejudge_seed", "(top level)", _MAX_SEED)
        if not isinstance(data.get("entries"), list):
            raise ReportError("entries is not a list")
        entries = tuple(_entry(item, i, seed) for i, item in enumerate(data["entries"]))
        seen: set[tuple[str, str]] = set()
        for entry in entries:
            if (entry.name, entry.task) in seen:
                raise ReportError(f"{entry.where} names {entry.name!r} on {entry.task} a second time")
            seen.add((entry.name, entry.task))
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None
    return RejudgeReport(path, seed, entries)


def apply_to_board(report: RejudgeReport | None, outcomes: Iterable[Any]) -> None:
    """Give each verified outcome (``Verified``) on the board the agreement its report entry states, and a
    ``rejudge_note`` to every one that shows none (why it was not re-judged).

    Every report entry must name a submission the build verified, by name and task, and an agreement may stand only
    for an entry the verifier can re-ask (no inputs of its own); else a :class:`ReportError` naming it. A submission
    the build rejected stays off the board whatever the report says.
    """
    outcomes = list(outcomes)
    by_key = {(str(v.submission.get("name")), str((v.submission.get("task") or {}).get("name"))): v
              for v in outcomes if v.submission}
    listed = set()
    for entry in (report.entries if report is not None else ()):
        v = by_key.get((entry.name, entry.task))
        if v is None:
            raise ReportError(f"{report.path}: {entry.where} names {entry.name!r} on {entry.task}, which is not on the "
                              "board (write the report again with `privasis-bench leaderboard verify submissions "
                              f"--report {report.path}`)")
        if entry.agreement is not None and not _rejudged_family(v):
            raise ReportError(f"{report.path}: {entry.where} gives {entry.name!r} on {entry.task} a re-judge agreement, "
                              f"but its task family {v.family!r} has no judge")
        if entry.agreement is not None and v.custom:
            raise ReportError(f"{report.path}: {entry.where} gives {entry.name!r} on {entry.task} a re-judge agreement, "
                              f"but the entry uses {', '.join(v.custom)} of its own, which the verifier cannot re-ask")
        listed.add(id(v))
        if v.ok:
            v.agreement = None if entry.agreement is None else entry.agreement.as_dict()
    for v in outcomes:
        if v.ok and v.agreement is None and _rejudged_family(v):
            v.rejudge_note = not_rejudged(v, report, id(v) in listed)


def _rejudged_family(v: Any) -> bool:
    """True when the entry's family has a re-judge (only its entries hold agreements)."""
    return family_named(getattr(v, "family", None)).rejudge is not None


def not_rejudged(v: Any, report: RejudgeReport | None, listed: bool) -> str:
    """Why an entry on the board shows no re-judge agreement (one short line)."""
    if v.custom:
        return f"not re-judged: uses {', '.join(v.custom)} of its own, which the verifier cannot re-ask"
    if report is None:
        return f"not re-judged: no committed re-judge report ({REPORT_NAME})"
    if not listed:
        return f"not re-judged: not in {REPORT_NAME} (verify it with --report)"
    return ("not re-judged: self-reported track" if v.submission.get("track") != "verified"
            else "not re-judged: no agreement in the report")


def merged(previous: dict[str, Any] | None, fresh: dict[str, Any]) -> dict[str, Any]:
    """A verify report (``fresh``) merged into an earlier committed one: entries of the same name and task are
    replaced, the others kept while their folder still holds a submission (each keeps its own seed); entries sorted
    by path."""
    if previous is None:
        return fresh
    key = (lambda e: (str(e.get("name")), str(e.get("task"))))
    mine = {key(e) for e in fresh["entries"]}
    kept = [e for e in previous.get("entries") or [] if isinstance(e, dict) and key(e) not in mine
            and (Path(str(e.get("path"))) / "submission.json").is_file()]  # a removed submission leaves the report
    entries = sorted(kept + list(fresh["entries"]), key=lambda e: (str(e.get("path")), *key(e)))
    return {**fresh, "entries": entries}


def read_raw(path: str | Path) -> dict[str, Any]:
    """A committed report's JSON after :func:`read_report` accepted it (what :func:`merged` builds on)."""
    read_report(path)
    return read_json(Path(path), [])


def summary(agreement: dict[str, Any]) -> str:
    """One line for a reader: who re-judged, with which seed, how many agreed, of what, per kind."""
    kinds = ", ".join(f"{k} {c.get('agreed')}/{c.get('asked')}" for k, c in sorted((agreement.get("by_kind") or {}).items()))
    rate = agreement.get("rate")
    unstable = f", {agreement.get('unstable')} unstable excused" if agreement.get("unstable") else ""
    return (f"re-judged by {agreement.get('judge')} (seed {agreement.get('seed')}): {agreement.get('agreed')}/"
            f"{agreement.get('asked')} agree{'' if rate is None else f' ({rate:.1f}%)'} of {agreement.get('pool')} "
            "judged attributes" + unstable + (f" [{kinds}]" if kinds else ""))


def difference(committed: ReportAgreement, fresh: dict[str, Any]) -> str | None:
    """None when re-asking gave the committed numbers; else what differs, in a few words."""
    want = committed.as_dict()
    keys = [k for k in want if want[k] != fresh.get(k)]
    if not keys:
        return None
    return f"the report says {summary(want)}; re-asking with seed {committed.seed} gives {summary(fresh)}"
