"""``run --plan``: what a run will ask, per role, before anything is paid (no model call is made).

For the model under test, each scored record's request is built exactly as the run builds it; a record whose output
is already in ``sanitized.jsonl`` or whose answer the response cache holds costs nothing. What scoring a record asks
the family's roles is the scorer's to say (``scorer.planner``: the Privasis judge counts its questions per attribute,
skipping verdicts ``judged.jsonl`` holds); those counts are upper bounds, and where the output is not known yet the
original record's text stands in for it. Prompt tokens are estimated at about :data:`CHARS_PER_TOKEN` characters a
token; output tokens at most the budget of each request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.spec import ModelSpec, spec_label
from privasis_bench.data.records import Record
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.pipeline.prices import Price
from privasis_bench.pipeline.sanitize import read_outputs
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


def estimate_tokens(request: ChatRequest) -> int:
    """About how many prompt tokens a request is (characters / :data:`CHARS_PER_TOKEN`, rounded up)."""
    return math.ceil(sum(len(content) for _, content in request.messages) / CHARS_PER_TOKEN)


def _in_cache(cache: ResponseCache | None, request: ChatRequest, spec_key: str) -> bool:
    return cache is not None and request.cache_key(spec_key) in cache


def plan_task(task: TaskConfig, records: Iterable[Record], task_dir: Path | None, *, model: ModelSpec, scorer: Any,
              roles: dict[str, ModelSpec], cache: ResponseCache | None, instruction: str, max_tokens: int,
              temperature: float) -> list[RolePlan]:
    """The plans of one task of any family (reads saved files and the cache; writes nothing): the model's rewrite of
    each record as the run asks it, then what the scorer's ``planner(task_dir)`` says scoring it asks each role of
    ``roles`` (at most). ``task_dir`` None: no run directory was named, so only the cache answers anything."""
    model_plan = RolePlan("model", spec_label(model))
    plans = {role: RolePlan(role, spec_label(spec), upper_bound=True) for role, spec in roles.items()}
    saved = (read_outputs(task_dir / "sanitized.jsonl")
             if task_dir is not None and (task_dir / "sanitized.jsonl").exists() else {})
    plan_record = scorer.planner(task_dir)
    template = read_template(task)
    for record in records:
        request = build_sanitize_request(record, task, instruction=instruction, max_tokens=max_tokens,
                                         temperature=temperature, template=template)
        prev = saved.get(record.id)
        output = prev.output if prev is not None and prev.ok and prev.prompt_hash == request.prompt_hash() else None
        if output is not None or _in_cache(cache, request, model.cache_identity()):
            model_plan.answered += 1
        else:
            model_plan.add(request)
        plan_record(record, output, plans, lambda role, ask: _in_cache(cache, ask, roles[role].cache_identity()))
    return [model_plan, *plans.values()]
