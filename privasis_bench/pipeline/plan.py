"""``run --plan``: what a run will ask, per role, before anything is paid (no model call is made).

For the model under test, each scored record's request is built exactly as the run builds it; a record whose output
is already in ``sanitized.jsonl`` or whose answer the response cache holds costs nothing. For the judge, a record
whose verdict ``judged.jsonl`` already holds costs nothing; otherwise each target attribute asks at most three
questions (guess on the output, guess on the original record, the comparison) and each kept attribute two (guess,
inclusion). The guess on the original record does not depend on the output, so the cache is asked about it exactly;
for the rest the count is an upper bound (tier 1 and the early inference stop ask nothing), and where the output is
not known yet the original record's text stands in for it. Prompt tokens are estimated at about
:data:`CHARS_PER_TOKEN` characters a token; output tokens at most the budget of each request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.records import Record
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.pipeline.prices import Price
from privasis_bench.pipeline.sanitize import read_outputs
from privasis_bench.protocol.checkpoint import CHECKPOINT_NAME, output_hash, read_checkpoint
from privasis_bench.protocol.judge import Judge
from privasis_bench.protocol.judging import JudgeChoice, spec_label
from privasis_bench.protocol.testee import build_sanitize_request, read_template
from privasis_bench.tasks.config import TaskConfig

CHARS_PER_TOKEN = 4


@dataclass
class RolePlan:
    """What one role of a run will ask."""

    role: str
    label: str
    requests: int = 0  # to be sent (the judge: at most)
    answered: int = 0  # already answered (saved outputs, checkpointed verdicts, the response cache)
    prompt_tokens: int = 0  # estimated, of the requests to be sent
    output_tokens: int = 0  # at most (each request's budget)
    upper_bound: bool = False

    def add(self, request: ChatRequest) -> None:
        """Count one request to be sent."""
        self.requests += 1
        self.prompt_tokens += estimate_tokens(request)
        self.output_tokens += request.max_tokens

    def costs(self, prices: dict[str, Price] | None) -> tuple[float | None, float | None]:
        """(live, batched) cost from the price table; None where it has no price."""
        price = (prices or {}).get(self.label)
        if price is None:
            return None, None
        return (price.cost(self.prompt_tokens, self.output_tokens, batched=False),
                price.cost(self.prompt_tokens, self.output_tokens, batched=True))

    def to_dict(self, prices: dict[str, Price] | None = None) -> dict[str, Any]:
        live, batched = self.costs(prices)
        return {"role": self.role, "model": self.label, "requests": self.requests, "upper_bound": self.upper_bound,
                "already_answered": self.answered, "prompt_tokens": self.prompt_tokens,
                "max_output_tokens": self.output_tokens, "cost_live": live, "cost_batched": batched}


def estimate_tokens(request: ChatRequest) -> int:
    """About how many prompt tokens a request is (characters / :data:`CHARS_PER_TOKEN`, rounded up)."""
    return math.ceil(sum(len(content) for _, content in request.messages) / CHARS_PER_TOKEN)


def _in_cache(cache: ResponseCache | None, request: ChatRequest, spec_key: str) -> bool:
    return cache is not None and request.cache_key(spec_key) in cache


def plan_task(task: TaskConfig, records: Iterable[Record], task_dir: Path | None, *, model: ModelSpec, choice: JudgeChoice,
              cache: ResponseCache | None, instruction: str, max_tokens: int, temperature: float) -> list[RolePlan]:
    """The model's and the judge's plans for one task (reads saved files and the cache; writes nothing).

    ``task_dir`` None: no run directory was named, so nothing counts as already answered but the cache."""
    model_plan = RolePlan("model", spec_label(model))
    judge_plan = RolePlan("judge", choice.label, upper_bound=True) if choice.spec is not None else None
    model_key = model.cache_identity()
    judge_key = choice.spec.cache_identity() if choice.spec is not None else ""
    saved = (read_outputs(task_dir / "sanitized.jsonl")
             if task_dir is not None and (task_dir / "sanitized.jsonl").exists() else {})
    verdicts = (read_checkpoint(task_dir / CHECKPOINT_NAME, choice.fingerprint())
                if judge_plan is not None and task_dir is not None else {})
    judge = Judge(None, choice.prompts, choice.settings)
    template = read_template(task)
    for record in records:
        request = build_sanitize_request(record, task, instruction=instruction, max_tokens=max_tokens,
                                         temperature=temperature, template=template)
        prev = saved.get(record.id)
        output = None
        if prev is not None and prev.ok and prev.prompt_hash == request.prompt_hash():
            model_plan.answered += 1
            output = prev.output
        elif _in_cache(cache, request, model_key):
            model_plan.answered += 1
        else:
            model_plan.add(request)
        if judge_plan is None:
            continue
        if output is not None and (record.id, output_hash(output, False)) in verdicts:
            judge_plan.answered += 1
            continue
        _judge_requests(judge, judge_plan, record, output if output is not None else record.text, cache, judge_key)
    return [model_plan] + ([judge_plan] if judge_plan is not None else [])


def plan_scored_task(task: TaskConfig, records: Iterable[Record], task_dir: Path, *, model: ModelSpec,
                     scorer: Any, roles: dict[str, ModelSpec], cache: ResponseCache | None, max_tokens: int,
                     temperature: float) -> list[RolePlan]:
    """The plans of a task whose scorer scores finished outputs: the model's rewrite of each record (as the run asks
    it), then what the scorer's ``role_requests(record, text)`` says it asks each of its family's roles (at most;
    the original text stands in for an output not written yet)."""
    model_plan = RolePlan("model", spec_label(model))
    plans = {role: RolePlan(role, spec_label(spec), upper_bound=True) for role, spec in roles.items()}
    saved = read_outputs(task_dir / "sanitized.jsonl") if (task_dir / "sanitized.jsonl").exists() else {}
    template = read_template(task)
    for record in records:
        request = build_sanitize_request(record, task, instruction="base", max_tokens=max_tokens,
                                         temperature=temperature, template=template)
        prev = saved.get(record.id)
        output = prev.output if prev is not None and prev.ok and prev.prompt_hash == request.prompt_hash() else None
        if output is not None or _in_cache(cache, request, model.cache_identity()):
            model_plan.answered += 1
        else:
            model_plan.add(request)
        for role, requests in scorer.role_requests(record, output if output is not None else record.text).items():
            if role not in plans:
                continue
            for ask in requests:
                if _in_cache(cache, ask, roles[role].cache_identity()):
                    plans[role].answered += 1
                else:
                    plans[role].add(ask)
    return [model_plan, *plans.values()]


def _judge_requests(judge: Judge, plan: RolePlan, record: Record, text: str, cache: ResponseCache | None,
                    key: str) -> None:
    """Add the judge questions one record may need (at most)."""
    for attr in record.targets:
        if attr.value is None:
            continue
        for request in (judge.target_guess_request(text, attr), judge.compare_request(attr, str(attr.value), str(attr.value))):
            plan.add(request)
        original = judge.target_guess_request(record.text, attr)
        if _in_cache(cache, original, key):
            plan.answered += 1
        else:
            plan.add(original)
    for attr in record.keep:
        if attr.value is None:
            continue
        plan.add(judge.keep_guess_request(text, attr))
        plan.add(judge.inclusion_request(text, str(attr.value), attr))
