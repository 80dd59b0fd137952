"""Re-judging for ``leaderboard verify``: the fresh-seed check of each entry and the check of a committed report.

One :class:`JudgeSession` serves the whole command: one engine per judge (a local model is loaded once) and one
in-memory answer memo per judge (:class:`~privasis_bench.leaderboard.rejudge.AnswerMemo`), shared by both passes.
So the committed report's check, which re-asks with the report's own seed, costs no judge call for an entry whose
pool was re-asked whole by the fresh-seed pass (the same questions), and only the newly drawn ones otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.executor import Engine
from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.rejudge import Agreement, AnswerMemo, rejudge, settings_for
from privasis_bench.leaderboard.rejudge_report import RejudgeReport, difference, summary
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.leaderboard.verify import Verified
from privasis_bench.pipeline.run import EngineOptions
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.results.files import load_sample_rows


class JudgeSession:
    """Judge engines and their answer memos for one verify command (close it at the end)."""

    def __init__(self, judge_args: Optional[str], data_dir: Optional[Path]) -> None:
        self.judge_args, self.data_dir = judge_args, data_dir
        self._engines: dict[str, Engine] = {}
        self._memos: dict[str, AnswerMemo] = {}

    @property
    def calls(self) -> int:
        """Judge requests sent so far (answers found in the memo are not counted)."""
        return sum(m.calls for m in self._memos.values())

    def _memo(self, spec: ModelSpec) -> AnswerMemo:
        key = spec.key()
        if key not in self._memos:
            engine = EngineOptions(cache=None, progress=False).engine(spec, "judge")
            self._engines[key] = engine
            self._memos[key] = AnswerMemo(lambda reqs: engine.run(reqs, desc="rejudge"), engine.spec_key)
        return self._memos[key]

    def rejudge(self, v: Verified, *, n: int, judge: Optional[str], seed: int,
                max_disagreements: int) -> tuple[Agreement, str]:
        """Re-ask ``n`` of ``v``'s judged attributes drawn with ``seed`` (the pinned judge when ``judge`` is None);
        returns the agreement and the judge's key."""
        task = shipped_task(v.results["task"]["name"])  # verify accepted only shipped tasks for this entry
        args = self.judge_args if judge else (self.judge_args or task.judge.model_args)
        spec = ModelSpec.parse(judge or task.judge.model, args)
        loaded, _ = task_records(task, limit=v.results["dataset"].get("limit"), directory=self.data_dir)
        got = rejudge(load_sample_rows(v.path), {r.id: r for r in loaded.records}, settings_for(task, v.results), n=n,
                      seed=seed, max_disagreements=max_disagreements, entry=f"{v.submission.get('name')}:{task.task}",
                      runner=self._memo(spec), prompts=JudgePrompts.load(task.judge.templates))
        return got, spec.key()

    def close(self) -> None:
        """Release every engine (a local judge model is unloaded)."""
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()


def rejudged(v: Verified, session: JudgeSession, *, n: int, judge: Optional[str], seed: int,
             max_disagreements: int) -> str:
    """The fresh-seed check of one entry: sets its agreement, adds a problem when it fails; returns the note lines."""
    got, key = session.rejudge(v, n=n, judge=judge, seed=seed, max_disagreements=max_disagreements)
    v.agreement = got.as_dict(key)
    rate = "" if got.rate is None else f" ({got.rate:.1f}%)"
    if not got.passed:
        v.problems.append(f"{v.path / 'samples.jsonl'}: re-judged with {key}: {got.agreed}/{got.asked} of "
                          f"{got.pool} judged attributes agree{rate}, more than --max-disagreements {max_disagreements} "
                          "differ (the recorded judge answers are not the pinned judge's)")
    kinds = ", ".join(f"{k} {a[1]}/{a[0]}" for k, a in sorted(got.by_kind.items()))
    lines = [f"rejudge with {key}: {got.agreed}/{got.asked} agree{rate} of {got.pool} judged attributes"
             + (f" [{kinds}]" if kinds else "")] + [f"  {d}" for d in got.disagreements]
    return "\n  ".join(lines)


@dataclass(frozen=True)
class ReportCheck:
    """The outcome of checking a committed report: one line per dishonest or unmatched entry, and the cost."""

    checked: int
    problems: list[str]
    calls: int  # judge requests the check needed beyond the fresh-seed pass


def check_report(report: RejudgeReport, outcomes: list[Verified], session: JudgeSession, *, checkable: set[Path],
                 judge: Optional[str]) -> ReportCheck:
    """Re-ask every re-judged entry of ``report`` with the report's own seed and sample size; a line for each entry
    whose committed numbers differ (or that names no submission). ``checkable``: the entries that passed verify's
    file checks (the others fail on their own)."""
    by_key = {(str(v.submission.get("name")), str((v.submission.get("task") or {}).get("name"))): v
              for v in outcomes if v.submission}
    before, checked, problems = session.calls, 0, []
    for entry in report.entries:
        v = by_key.get((entry.name, entry.task))
        if v is None:
            problems.append(f"{report.path}: {entry.where} names {entry.name!r} on {entry.task}, which is not among "
                            "the verified submissions")
            continue
        committed = entry.agreement
        if committed is None or v.path not in checkable:
            continue
        verified_track = v.submission.get("track") == "verified"
        if not verified_track and not judge:
            problems.append(f"{report.path}: {entry.name} on {entry.task}: {summary(committed.as_dict())}; pass "
                            "--judge SPEC to check a self-reported entry's re-judge")
            continue
        got, key = session.rejudge(v, n=committed.sample_size, judge=None if verified_track else judge,
                                   seed=committed.seed, max_disagreements=committed.max_disagreements)
        checked += 1
        differs = difference(committed, got.as_dict(key))
        if differs:
            problems.append(f"{report.path}: {entry.name} on {entry.task}: {differs}")
    return ReportCheck(checked, problems, session.calls - before)
