"""The verified track's re-judge: re-ask the pinned judge about a seeded, stratified sample of recorded decisions.

The rule and its error model are stated with their numbers in docs/publishing.md (*Re-judge rule and what it
costs*): :func:`sample_size` is the smallest *n* with (1 - RATE)^n <= 1 - POWER; a re-asked decision agrees when the
judge gives the recorded verdict and cuts the same answers (``cut_answers``); a disagreement the judge repeats on
:data:`REASKS` fresh calls is firm and rejects the entry, one it does not repeat is excused as the judge's own
instability (up to ``max_disagreements``); a pool of *n* or fewer is re-asked whole (:attr:`Agreement.passed`).
Every decision kind gets at least one draw and its share of *n* rounded up (:func:`draw`). Each chosen attribute is
judged again alone, through the same :class:`~privasis_bench.protocol.judge.Judge` a run uses, with the *task's*
budgets; :class:`AnswerMemo` keeps one verify command's answers, so checking the committed report costs no second
call. An entry whose outputs are longer than the re-judge sends (:data:`REJUDGE_CHARS_PER_TOKEN`) is not re-judged
and fails closed (:func:`work_problems`).
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field
from typing import Any

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.data.records import Record
from privasis_bench.protocol.judge import BatchRunner, Judge, JudgeInput, JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.verdicts import SCORED_STATUSES
from privasis_bench.tasks.config import TaskConfig

#: The error model: an entry with a share RATE of forged decisions passes one run with probability at most 1 - POWER.
RATE = 0.05
POWER = 0.99
#: A fully re-asked pool is rejected when this share of its decisions (or more) differs.
WHOLE_POOL_RATE = 0.10
#: Fresh re-asks of each disagreement (to tell a firm disagreement from an unstable judge).
REASKS = 2
#: Longest output the re-judge sends, in characters per token of the task's output budget (English text averages
#: about 4; an output longer than this is padding, not text the model could have written within its budget).
REJUDGE_CHARS_PER_TOKEN = 6
#: The decision kinds the sample is stratified by.
KINDS = ("target:inference", "target:proximity", "target:sanitized", "keep:retained", "keep:lost")


def sample_size(rate: float = RATE, power: float = POWER) -> int:
    """Smallest n with (1 - rate)^n <= 1 - power: a firm disagreement rejects, so no forged decision may be drawn."""
    return max(1, math.ceil(math.log(1 - power) / math.log(1 - rate) - 1e-12))


def pass_probability(n: int, forged_share: float) -> float:
    """The chance that an entry with ``forged_share`` of its decisions forged passes one re-judge of ``n`` draws."""
    return (1 - forged_share) ** n


@dataclass
class Agreement:
    """How many re-asked verdicts matched the submitted ones, which did not, and whether the entry passes."""

    seed: int = 0
    sample_size: int = 0  # the n asked for (the stratified draw may ask a few more; a pool of n or fewer: all)
    pool: int = 0
    asked: int = 0
    agreed: int = 0
    max_disagreements: int = 0
    unstable: int = 0  # disagreements excused: the judge's own fresh re-asks differ from each other
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [asked, agreed]
    disagreements: list[str] = field(default_factory=list)

    @property
    def firm(self) -> int:
        """Disagreements the judge reproduces every time it is asked (each one rejects the entry)."""
        return self.asked - self.agreed - self.unstable

    @property
    def rate(self) -> float | None:
        return None if not self.asked else 100.0 * self.agreed / self.asked

    @property
    def passed(self) -> bool:
        differ = self.asked - self.agreed
        ok = self.firm == 0 and self.unstable <= self.max_disagreements
        if self.asked and self.asked >= self.pool:  # the whole pool was re-asked: the rate is known exactly
            return ok and differ < WHOLE_POOL_RATE * self.pool
        return ok

    def as_dict(self, judge: str) -> dict[str, Any]:
        """The board-data form: judge, seed, sample size, pool, asked, agreed, rate (%), rule, pass, per-kind counts."""
        return {"judge": judge, "seed": self.seed, "sample_size": self.sample_size, "pool": self.pool,
                "asked": self.asked, "agreed": self.agreed, "unstable": self.unstable,
                "rate": None if self.rate is None else round(self.rate, 2),
                "max_disagreements": self.max_disagreements, "passed": self.passed,
                "by_kind": {k: {"asked": a, "agreed": g} for k, (a, g) in sorted(self.by_kind.items())}}


def judged_attributes(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(kind, record id, "target"|"keep", name) of every attribute whose verdict came from a recorded judge answer,
    sorted: off-label (unparseable) answers included, in their own stratum (re-asking them is the check that they
    were the judge's), so no answer a submitter rewrites leaves the pool."""
    found = []
    for row in rows:
        if row.get("status") not in SCORED_STATUSES:
            continue
        rid = str(row.get("record_id"))
        found += [(f"target:{t['tier']}", rid, "target", t["name"]) for t in row.get("targets") or []
                  if t.get("tier") in ("inference", "proximity", "sanitized", "unparseable")
                  and t.get("guess") is not None]
        found += [(f"keep:{_keep_kind(k)}", rid, "keep", k["name"])
                  for k in row.get("keep") or [] if k.get("via") in ("judge", "unparseable")]
    return sorted(found)


def _keep_kind(keep: dict[str, Any]) -> str:
    if keep.get("via") == "unparseable":
        return "unparseable"
    return "retained" if keep.get("retained") else "lost"


def draw(pool: list[tuple[str, str, str, str]], n: int, rng: random.Random) -> list[tuple[str, str, str, str]]:
    """A stratified sample of at least ``n`` (all of ``pool`` when it is not larger): per kind, at least one draw and
    its share of ``n`` rounded up."""
    if len(pool) <= n:
        return list(pool)
    strata: dict[str, list] = {}
    for item in pool:
        strata.setdefault(item[0], []).append(item)
    chosen = []
    for kind in sorted(strata):
        members = strata[kind]
        take = min(len(members), max(1, math.ceil(n * len(members) / len(pool))))
        chosen += rng.sample(members, take)
    return sorted(chosen)


def settings_for(task: TaskConfig, results: dict[str, Any]) -> JudgeSettings:
    """The judge settings of the re-judge: the task's own temperature and budgets (never the submission's)."""
    parse_mode = task.judge.parse_mode  # a task setting the verifier pins (see .parse_pin), never the run's choice
    judge = results.get("judge") or {}  # the recorded scoring rules decide which outputs were shown to the judge
    return JudgeSettings(parse_mode=parse_mode, temperature=task.judge.temperature,
                         guess_max_tokens=task.judge.guess_max_tokens, compare_max_tokens=task.judge.compare_max_tokens,
                         empty_outputs="judge" if judge.get("empty_outputs") == "judge" else "skip",
                         inclusion_text="raw" if judge.get("inclusion_text") == "raw" else "after-think")


def work_problems(rows: list[dict[str, Any]], task: TaskConfig) -> list[str]:
    """Outputs longer than the re-judge sends (see :data:`REJUDGE_CHARS_PER_TOKEN`): the entry is not re-judged."""
    limit = REJUDGE_CHARS_PER_TOKEN * task.generation.max_tokens
    long = [(str(r.get("record_id"))[:80], len(r["output"])) for r in rows
            if r.get("status") in SCORED_STATUSES and isinstance(r.get("output"), str) and len(r["output"]) > limit]
    return [f"record {rid}: output has {size} characters, over the re-judge's bound of {limit} "
            f"({REJUDGE_CHARS_PER_TOKEN} per token of the task's {task.generation.max_tokens}-token output budget): "
            "the verifier does not re-judge it, so the entry cannot be verified" for rid, size in long[:5]]


def _decision(verdict: Any, role: str) -> tuple[Any, tuple[str, ...]]:
    """(the tier or retained flag, the answers cut at their budget) of a one-attribute verdict."""
    item = verdict.targets[0] if role == "target" else verdict.keep[0]
    return (item.tier if role == "target" else item.retained), tuple(sorted(item.cut_answers or ()))


def _recorded(row: dict[str, Any], role: str, name: str) -> tuple[Any, tuple[str, ...]]:
    entry = next(e for e in row["targets" if role == "target" else "keep"] if e["name"] == name)
    cut = entry.get("cut_answers")
    return (entry["tier"] if role == "target" else entry["retained"]), tuple(sorted(map(str, cut or ())))


def _describe(decision: tuple[Any, tuple[str, ...]]) -> str:
    value, cut = decision
    return repr(value) + (f" (cut: {', '.join(cut)})" if cut else "")


def rejudge(rows: list[dict[str, Any]], records: dict[str, Record], settings: JudgeSettings, *, n: int, seed: int,
            max_disagreements: int, runner: BatchRunner, prompts: JudgePrompts, entry: str = "",
            fresh: BatchRunner | None = None) -> Agreement:
    """Re-judge a stratified sample of ``n`` judged attributes drawn with ``seed`` (mixed with ``entry``).

    ``fresh`` asks without the answer memo: each of the first ``max_disagreements + 1`` disagreements is re-asked
    :data:`REASKS` times through it; one whose answers all agree is firm, else excused as unstable. Without
    ``fresh`` every disagreement is firm.
    """
    pool = judged_attributes(rows)
    chosen = draw(pool, n, random.Random(f"{seed}:{entry}"))
    by_id = {str(r.get("record_id")): r for r in rows}
    items, expected = [], []
    for _, rid, role, name in chosen:
        record, row = records[rid], by_id[rid]
        if role == "target":
            attr = next(a for a in record.targets if a.name == name)
            reduced = dataclasses.replace(record, targets=(attr,), keep=())
        else:
            attr = next(a for a in record.keep if a.name == name)
            reduced = dataclasses.replace(record, targets=(), keep=(attr,))
        expected.append(_recorded(row, role, name))
        items.append(JudgeInput(reduced, row.get("output")))
    verdicts, _ = Judge(runner, prompts, settings).judge(items) if items else ([], None)
    agreement = Agreement(seed=seed, sample_size=n, pool=len(pool), asked=len(items), max_disagreements=max_disagreements)
    differing = []
    for (kind, rid, role, name), item, want, verdict in zip(chosen, items, expected, verdicts):
        got = _decision(verdict, role)
        counts = agreement.by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        if got == want:
            agreement.agreed += 1
            counts[1] += 1
        else:
            differing.append((rid, role, name, item, want, got))
    for index, (rid, role, name, item, want, got) in enumerate(differing):
        line = f"record {rid} {role}:{name}: submitted {_describe(want)}, re-asked judge gives {_describe(got)}"
        if fresh is not None and index <= max_disagreements:
            again = Judge(fresh, prompts, settings).judge([item] * REASKS)[0]
            answers = [_decision(v, role) for v in again]
            if any(a != got for a in answers):
                agreement.unstable += 1
                line += f" (unstable: asked again it gives {', '.join(_describe(a) for a in answers)}; excused)"
            else:
                line += f" (firm: the same when asked {REASKS} more times)"
        agreement.disagreements.append(line)
    return agreement


class AnswerMemo:
    """A batch runner answering each distinct request once per verify command, from memory afterwards.

    ``key`` is the judge's cache identity (the engine's ``spec_key``); ``calls`` counts the requests sent to
    ``run_batch``. A failed answer is handed on but not kept, so a later pass asks again.
    """

    def __init__(self, run_batch: BatchRunner, key: str) -> None:
        self.run_batch, self.key = run_batch, key
        self.answers: dict[str, ChatResult] = {}
        self.calls = 0

    def __call__(self, requests: list[ChatRequest]) -> list[ChatResult]:
        keys = [request.cache_key(self.key) for request in requests]
        missing: dict[str, ChatRequest] = {}
        for k, request in zip(keys, requests):
            if k not in self.answers:
                missing.setdefault(k, request)
        fresh: dict[str, ChatResult] = {}
        if missing:
            self.calls += len(missing)
            fresh = dict(zip(missing, self.run_batch(list(missing.values()))))
            self.answers.update({k: r for k, r in fresh.items() if r.ok})
        return [self.answers.get(k) or fresh[k] for k in keys]

    def fresh(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Ask again without the memo (counted in ``calls``; the answers are not kept)."""
        self.calls += len(requests)
        return self.run_batch(list(requests))
