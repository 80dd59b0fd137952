"""Re-judging for ``leaderboard verify``: the fresh-seed check of each entry and the check of a committed report.

The re-judge is a family's verifier step (``FamilySpec.rejudge``): the family decides which of its roles to re-ask,
with which model, about which recorded decisions. This module gives it the models: one :class:`JudgeSession` serves
the whole command with one engine per (role, model) (a local model is loaded once) and one in-memory answer memo per
model (:class:`~privasis_bench.leaderboard.rejudge.AnswerMemo`), shared by both passes. So the committed report's
check, which re-asks with the report's own seed, costs no model call for an entry whose pool was re-asked whole by
the fresh-seed pass (the same questions), and only the newly drawn ones otherwise. A family without a re-judge has
nothing to re-ask and never holds an agreement.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.executor import Engine
from privasis_bench.leaderboard.family_api import family_named
from privasis_bench.leaderboard.rejudge import Agreement, AnswerMemo
from privasis_bench.leaderboard.rejudge_report import RejudgeReport, difference, summary
from privasis_bench.leaderboard.verify import Verified
from privasis_bench.pipeline.run import EngineOptions


class JudgeSession:
    """Role engines and their answer memos for one verify command (close it at the end); what a family's re-judge
    asks through (see :meth:`runner`)."""

    def __init__(self, judge_args: Optional[str], data_dir: Optional[Path], replicas: int = 1) -> None:
        self.model_args, self.data_dir = judge_args, data_dir  # the verifier's own model arguments (e.g. base_url)
        self.replicas = replicas  # copies of an in-process llama.cpp judge answering at once (never other answers)
        self._engines: dict[str, Engine] = {}
        self._memos: dict[str, AnswerMemo] = {}
        self.desc = "rejudge"  # what the progress lines name (the entry being re-judged)

    @property
    def calls(self) -> int:
        """Model requests sent so far (answers found in the memo are not counted)."""
        return sum(m.calls for m in self._memos.values())

    def runner(self, role: str, spec: ModelSpec, desc: str = "rejudge") -> AnswerMemo:
        """The memoised batch runner asking ``spec`` as ``role`` (one engine per role and model for the command);
        ``desc`` names the entry on the progress lines."""
        self.desc = desc
        key = f"{role}:{spec.key()}"
        if key not in self._memos:
            if self.replicas > 1 and spec.provider == "llamacpp" and "replicas" not in spec.args:
                # a transport argument: the memo and cache keys (the spec's cache identity) stay the same
                spec = ModelSpec(spec.provider, spec.model, {**spec.args, "replicas": self.replicas})
            # progress: a line every 30 s on stderr outside a terminal (CI), naming the entry; none once it is done
            engine = EngineOptions(cache=None, progress=True).engine(spec, role)
            # the recorded decisions kept cut and empty answers as they were: read the model's answers the same way
            # (a cut answer is compared through cut_answers, never retried into a failure)
            engine.answers = AnswerPolicy(empty="accept", truncated="accept")
            self._engines[key] = engine
            self._memos[key] = AnswerMemo(lambda reqs, e=engine: e.run(reqs, desc=self.desc), engine.spec_key)
        return self._memos[key]

    def rejudge(self, v: Verified, *, n: int, judge: Optional[str], seed: int,
                max_disagreements: int) -> tuple[Agreement | None, str | list[str]]:
        """The entry's family re-judge (``FamilySpec.rejudge``): re-ask ``n`` of its recorded decisions drawn with
        ``seed`` (the family's pinned model unless ``judge`` names another); returns the agreement and the model's
        identity, or None and the reasons when the entry is over the re-judge's work bound (it then fails closed)."""
        return family_named(v.family).call("rejudge", v, self, n=n, seed=seed, max_disagreements=max_disagreements,
                                           model=judge)

    def close(self) -> None:
        """Release every engine (a local model is unloaded)."""
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()


def rejudged(v: Verified, session: JudgeSession, *, n: int, judge: Optional[str], seed: int,
             max_disagreements: int) -> str:
    """The fresh-seed check of one entry: sets its agreement, adds a problem when it fails; returns the note lines."""
    got, key = session.rejudge(v, n=n, judge=judge, seed=seed, max_disagreements=max_disagreements)
    if got is None:  # over the work bound: fails closed, never re-judged, no agreement
        v.problems += [f"{v.path / 'samples.jsonl'}: {line}" for line in key]
        return "not re-judged: over the re-judge's work bound"
    assert isinstance(key, str)
    v.agreement = got.as_dict(key)
    rate = "" if got.rate is None else f" ({got.rate:.1f}%)"
    if not got.passed:
        why = (f"{got.firm} firm disagreement(s) (the judge gives the same other answer every time it is asked)"
               if got.firm else f"{got.unstable} unstable disagreement(s), over --max-disagreements {max_disagreements}"
               if got.unstable > max_disagreements else "10% or more of the whole pool differ")
        v.problems.append(f"{v.path / 'samples.jsonl'}: re-judged with {key}: {got.agreed}/{got.asked} of "
                          f"{got.pool} judged attributes agree{rate}; {why} (the recorded judge answers are not the "
                          "pinned judge's)")
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
    """Check a committed report against the submissions; a line for each entry it cannot stand for.

    Every entry of a family with a re-judge that passed verify must be in the report; a family without one never
    holds an agreement; an agreement may stand only for an entry the verifier
    re-asks (never one with inputs of its own, such as its own judge prompts), and every verified-track entry the
    verifier re-asks must carry one. Each agreement is re-asked with the report's own seed and sample size and must
    give the committed numbers. ``checkable``: the entries that passed verify's file checks (others fail on their own).
    """
    by_key = {(str(v.submission.get("name")), str((v.submission.get("task") or {}).get("name"))): v
              for v in outcomes if v.submission}
    before, checked, problems = session.calls, 0, []
    listed = set()
    for entry in report.entries:
        v = by_key.get((entry.name, entry.task))
        where = f"{report.path}: {entry.name} on {entry.task}"
        if v is None:
            problems.append(f"{report.path}: {entry.where} names {entry.name!r} on {entry.task}, which is not among "
                            "the verified submissions")
            continue
        listed.add(v.path)
        committed = entry.agreement
        if family_named(v.family).rejudge is None:  # a family without a re-judge has nothing to re-ask
            if committed is not None:
                problems.append(f"{where}: the report holds a re-judge agreement, but task family {v.family!r} has no "
                                "judge (its numbers are recomputed in full)")
            continue
        if v.custom and committed is not None:
            problems.append(f"{where}: the report holds a re-judge agreement, but the entry uses "
                            f"{', '.join(v.custom)} of its own, which the verifier cannot re-ask (an agreement stands "
                            "only for an entry the verifier re-asked)")
            continue
        if v.path not in checkable:
            continue
        verified_track = v.submission.get("track") == "verified"
        if committed is None:
            if verified_track:
                problems.append(f"{where}: the report holds no re-judge agreement for a verified-track entry (write it "
                                "with `leaderboard verify ... --report`)")
            continue
        if not verified_track and not judge:
            problems.append(f"{where}: {summary(committed.as_dict())}; pass --judge SPEC to check a self-reported "
                            "entry's re-judge")
            continue
        got, key = session.rejudge(v, n=committed.sample_size, judge=None if verified_track else judge,
                                   seed=committed.seed, max_disagreements=committed.max_disagreements)
        checked += 1
        if got is None:
            problems.append(f"{where}: cannot be re-asked: {key[0]}")
            continue
        assert isinstance(key, str)
        differs = difference(committed, got.as_dict(key))
        if differs:
            problems.append(f"{where}: {differs}")
    for v in outcomes:
        if v.ok and v.path not in listed and family_named(v.family).rejudge is not None:
            problems.append(f"{report.path}: {v.submission.get('name')} on {(v.submission.get('task') or {}).get('name')} "
                            f"({v.path}) passed verify but is not in the report (every verified entry must be; write it "
                            "again with `leaderboard verify submissions --report`)")
    return ReportCheck(checked, problems, session.calls - before)
