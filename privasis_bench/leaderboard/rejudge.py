"""``verify --rejudge K``: re-ask the judge about K seeded, judged attributes of a submission and report agreement.

Each chosen attribute is judged again on its own (the record reduced to that one attribute, the submitted
output text, the shipped prompts and the submission's answer budgets), through the same
:class:`~privasis_bench.protocol.judge.Judge` a run uses, and its new verdict is compared with the submitted one.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

from privasis_bench.data.records import Record
from privasis_bench.protocol.judge import BatchRunner, Judge, JudgeInput, JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts


@dataclass
class Agreement:
    """How many re-asked verdicts matched the submitted ones, and which did not."""

    asked: int = 0
    agreed: int = 0
    disagreements: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return None if not self.asked else 100.0 * self.agreed / self.asked


def judged_attributes(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(record id, "target"|"keep", name) of every attribute whose verdict came from the judge, sorted."""
    found = []
    for row in rows:
        if row.get("status") != "judged":
            continue
        found += [(row["record_id"], "target", t["name"]) for t in row.get("targets") or []
                  if t.get("tier") in ("inference", "proximity", "sanitized") and t.get("guess") is not None]
        found += [(row["record_id"], "keep", k["name"]) for k in row.get("keep") or [] if k.get("via") == "judge"]
    return sorted(found)


def settings_of(results: dict[str, Any]) -> JudgeSettings:
    """The judge settings a submission was judged with (parse mode, temperature, answer budgets, scoring rules)."""
    judge = results.get("judge") or {}
    return JudgeSettings(parse_mode=results.get("parse_mode", "official"), temperature=judge.get("temperature", 0.0),
                         guess_max_tokens=judge.get("guess_max_tokens", 512), compare_max_tokens=judge.get("compare_max_tokens", 4096),
                         empty_outputs=judge.get("empty_outputs") or "skip", inclusion_text=judge.get("inclusion_text") or "after-think")


def rejudge(rows: list[dict[str, Any]], records: dict[str, Record], results: dict[str, Any], *, k: int, seed: int,
            runner: BatchRunner, prompts: JudgePrompts) -> Agreement:
    """Re-judge ``k`` seeded judged attributes and compare each new verdict with the submitted one."""
    pool = judged_attributes(rows)
    chosen = random.Random(seed).sample(pool, min(k, len(pool)))
    by_id = {r["record_id"]: r for r in rows}
    items, expected = [], []
    for rid, role, name in chosen:
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
    verdicts, _ = Judge(runner, prompts, settings_of(results)).judge(items)
    agreement = Agreement(asked=len(items))
    for (rid, role, name), want, verdict in zip(chosen, expected, verdicts):
        got = verdict.targets[0].tier if role == "target" else verdict.keep[0].retained
        if got == want:
            agreement.agreed += 1
        else:
            agreement.disagreements.append(f"record {rid} {role}:{name}: submitted {want!r}, re-asked judge gives {got!r}")
    return agreement
