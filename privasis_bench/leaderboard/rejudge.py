"""The verified track's re-judge: re-ask the pinned judge about a fresh random sample of recorded judge decisions.

Error model (docs/publishing.md states it with the numbers). Let *p* be the share of an entry's judged attributes
whose recorded decision the pinned judge would not give. The verifier re-asks *n* of them, drawn with a seed nobody
knows in advance (fresh on every run, printed so the check can be repeated with ``--seed``), and rejects the entry
when more than *c* re-asked decisions differ (``--max-disagreements``, default 0). *n* is the smallest size with
P(at most *c* of *n* differ | *p* = 10%) <= 5%: 29 for *c* = 0, 46 for *c* = 1, 61 for *c* = 2. So an entry that
disagrees with the pinned judge on 10% or more of its judged attributes is rejected with probability >= 95%, while an
honest entry (same judge, temperature 0: every re-asked decision is reproduced) always passes. Drawing without
replacement from a finite pool only raises the rejection probability; when the pool holds *n* or fewer attributes,
all are re-asked and the entry is rejected when more than *c* differ or 10% or more differ.

The sample is stratified by decision kind (each judged leak tier, sanitized, retained, lost): every non-empty kind
gets at least one draw and otherwise its share of *n* rounded up, so a forger cannot hide rewritten decisions in a
rare kind (with *c* = 0 the bound above still holds: per-kind draws at least proportional can only catch more).
Each chosen attribute is judged again on its own (the record reduced to that one attribute, the submitted output
text, the shipped prompts and the *task's* answer budgets), through the same :class:`~privasis_bench.protocol.judge.Judge`
a run uses. :class:`AnswerMemo` keeps every answer of one verify command in memory, so re-asking the same attributes
(the committed report's check, :mod:`.rejudge_report`) costs no second judge call.
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
from privasis_bench.tasks.config import TaskConfig

#: The error model: a disagreement rate of at least RATE is caught with probability at least POWER.
RATE = 0.10
POWER = 0.95
#: The decision kinds the sample is stratified by.
KINDS = ("target:inference", "target:proximity", "target:sanitized", "keep:retained", "keep:lost")


def sample_size(max_disagreements: int = 0, rate: float = RATE, power: float = POWER) -> int:
    """Smallest n with P(Binomial(n, rate) <= max_disagreements) <= 1 - power."""
    n = max_disagreements + 1
    while sum(math.comb(n, i) * rate**i * (1 - rate) ** (n - i) for i in range(max_disagreements + 1)) > 1 - power:
        n += 1
    return n


@dataclass
class Agreement:
    """How many re-asked verdicts matched the submitted ones, which did not, and whether the entry passes."""

    seed: int = 0
    sample_size: int = 0  # the n asked for (the stratified draw may ask a few more; a pool of n or fewer: all)
    pool: int = 0
    asked: int = 0
    agreed: int = 0
    max_disagreements: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [asked, agreed]
    disagreements: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return None if not self.asked else 100.0 * self.agreed / self.asked

    @property
    def passed(self) -> bool:
        differ = self.asked - self.agreed
        if self.asked and self.asked >= self.pool:  # the whole pool was re-asked: the rate is known exactly
            return differ <= self.max_disagreements and differ < RATE * self.pool
        return differ <= self.max_disagreements

    def as_dict(self, judge: str) -> dict[str, Any]:
        """The board-data form: judge, seed, sample size, pool, asked, agreed, rate (%), rule, pass, per-kind counts."""
        return {"judge": judge, "seed": self.seed, "sample_size": self.sample_size, "pool": self.pool,
                "asked": self.asked, "agreed": self.agreed,
                "rate": None if self.rate is None else round(self.rate, 2),
                "max_disagreements": self.max_disagreements, "passed": self.passed,
                "by_kind": {k: {"asked": a, "agreed": g} for k, (a, g) in sorted(self.by_kind.items())}}


def judged_attributes(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(kind, record id, "target"|"keep", name) of every attribute whose verdict came from the judge, sorted."""
    found = []
    for row in rows:
        if row.get("status") != "judged":
            continue
        rid = str(row.get("record_id"))
        found += [(f"target:{t['tier']}", rid, "target", t["name"]) for t in row.get("targets") or []
                  if t.get("tier") in ("inference", "proximity", "sanitized") and t.get("guess") is not None]
        found += [(f"keep:{'retained' if k.get('retained') else 'lost'}", rid, "keep", k["name"])
                  for k in row.get("keep") or [] if k.get("via") == "judge"]
    return sorted(found)


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
    parse_mode = results.get("parse_mode") if results.get("parse_mode") in ("official", "strict") else task.judge.parse_mode
    judge = results.get("judge") or {}  # the recorded scoring rules decide which outputs were shown to the judge
    return JudgeSettings(parse_mode=parse_mode, temperature=task.judge.temperature,
                         guess_max_tokens=task.judge.guess_max_tokens, compare_max_tokens=task.judge.compare_max_tokens,
                         empty_outputs="judge" if judge.get("empty_outputs") == "judge" else "skip",
                         inclusion_text="raw" if judge.get("inclusion_text") == "raw" else "after-think")


def rejudge(rows: list[dict[str, Any]], records: dict[str, Record], settings: JudgeSettings, *, n: int, seed: int,
            max_disagreements: int, runner: BatchRunner, prompts: JudgePrompts, entry: str = "") -> Agreement:
    """Re-judge a stratified sample of ``n`` judged attributes drawn with ``seed`` (mixed with ``entry``)."""
    pool = judged_attributes(rows)
    chosen = draw(pool, n, random.Random(f"{seed}:{entry}"))
    by_id = {str(r.get("record_id")): r for r in rows}
    items, expected = [], []
    for _, rid, role, name in chosen:
        record, row = records[rid], by_id[rid]
        if role == "target":
            attr = next(a for a in record.targets if a.name == name)
            reduced = dataclasses.replace(record, targets=(attr,), keep=())
            expected.append(next(t["tier"] for t in row["targets"] if t["name"] == name))
        else:
            attr = next(a for a in record.keep if a.name == name)
            reduced = dataclasses.replace(record, targets=(), keep=(attr,))
            expected.append(next(kv["retained"] for kv in row["keep"] if kv["name"] == name))
        items.append(JudgeInput(reduced, row.get("output")))
    verdicts, _ = Judge(runner, prompts, settings).judge(items) if items else ([], None)
    agreement = Agreement(seed=seed, sample_size=n, pool=len(pool), asked=len(items), max_disagreements=max_disagreements)
    for (kind, rid, role, name), want, verdict in zip(chosen, expected, verdicts):
        got = verdict.targets[0].tier if role == "target" else verdict.keep[0].retained
        counts = agreement.by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        if got == want:
            agreement.agreed += 1
            counts[1] += 1
        else:
            agreement.disagreements.append(f"record {rid} {role}:{name}: submitted {want!r}, re-asked judge gives {got!r}")
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
