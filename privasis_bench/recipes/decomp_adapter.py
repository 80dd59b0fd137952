"""``decomp:<spec>``: the decomposition pipeline at inference time, around any base model.

``-m decomp:llamacpp:smollm2`` sanitizes each record in steps, every one a call to the wrapped model through
its own engine (retries, concurrency): the base model first reads the instruction into a list of targets
(lines that it cannot classify are read as "abstract"; when it names none, the instruction's own "- " lines
are used, and failing that the whole instruction is one target), then the text is chunked, spans are found
per chunk and target, each chunk is rewritten target by target, and the chunks are merged.

It reads only what the model under test is given (the text and the instruction), never the gold targets, so
it is rankable. Each result's usage is the sum of its sub-calls' usage. Arguments: ``recipe`` (default
``decomp``), ``inner_concurrency`` (default 2); every other argument goes to the wrapped model.
"""

from __future__ import annotations

import re
from typing import Any

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.answers import RECIPE_STEPS
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.errors import ModelSpecError
from privasis_bench.recipes.chunking import chunk_text
from privasis_bench.recipes.config import RecipeConfig, load_recipe
from privasis_bench.recipes.decompose import find_spans, merged, rewrite_chunks
from privasis_bench.recipes.steps import Ask, Call, alive, list_items, make_request, run_calls

_DROP = re.compile(r"\b(drop|remove|delete|omit|erase|redact|take out|leave out)\b", re.I)
_KIND_PREFIX = re.compile(r"^\s*(abstract|generali[sz]e|drop|remove)\s*[:\-]\s*", re.I)


def instruction_lines(instruction: str) -> list[str]:
    """The "- " lines of an instruction (a base instruction is one strategy per line)."""
    return [m.group(1).strip() for ln in instruction.splitlines() if (m := re.match(r"^\s*[-*•]\s+(.*\S)", ln))]


def parse_targets(answer: str, instruction: str, limit: int) -> list[dict[str, Any]]:
    """Targets from the base model's answer, else from the instruction's lines, else the instruction itself."""
    lines = [ln for ln in list_items(answer) if len(ln) > 3] or instruction_lines(instruction) or [instruction.strip()]
    targets = []
    for line in lines[:limit]:
        kind = "drop" if _DROP.search(line.split(":")[0] if ":" in line else line) else "abstract"
        text = _KIND_PREFIX.sub("", line).strip() or line
        targets.append({"kind": kind, "label": text, "values": [], "strategy": line})
    return targets


def read_targets(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask) -> None:
    """Ask the base model to list what the instruction wants removed or generalized."""
    calls = []
    for row in alive(rows):

        def apply(answer: str, row=row) -> None:
            row["targets"] = parse_targets(answer, row["instruction"], recipe.corpus.max_targets)

        calls.append(Call(row, make_request(recipe, "targets", instruction=row["instruction"]), apply))
    run_calls(calls, ask, "targets")


def sanitize_batch(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask) -> list[dict[str, Any]]:
    """Rows with ``text`` and ``instruction`` -> the same rows with ``output`` (or ``error``) and ``usage``."""
    for row in rows:
        row["chunks"] = chunk_text(row["text"], recipe.corpus.chunk_chars)
    read_targets(rows, recipe, ask)
    find_spans(rows, recipe, ask, require=False)
    rewrite_chunks(rows, recipe, ask)
    for row in alive(rows):
        row["output"] = merged(row)
    return rows


def request_instruction(request: ChatRequest) -> str:
    """The instruction variant the sanitize prompt carries (smoothed or base), read from the request's record."""
    record = request.record
    prompt = request.messages[-1][1]
    for variant in ("smoothed", "base"):  # whichever the prompt actually carries
        text = record.instruction(variant)
        if text and text in prompt:
            return text
    return record.base_instruction


def request_rows(requests: list[ChatRequest], wrapper: str) -> list[dict[str, Any]]:
    """A wrapper adapter's working rows (id, record text, instruction), one per sanitize request."""
    rows: list[dict[str, Any]] = []
    for request in requests:
        if request.record is None:
            raise AdapterError(f"{wrapper} needs the sanitize request's record (its text and instruction)", retryable=False)
        rows.append({"id": request.record.id, "text": request.record.text, "instruction": request_instruction(request)})
    return rows


def row_results(rows: list[dict[str, Any]], wrapper: str) -> list[ChatResult]:
    """Each row's output as a chat result with its sub-calls' usage; a failed row is a failed result naming its step."""
    results = []
    for row in rows:
        u = row.get("usage") or {}
        usage = Usage(int(u.get("prompt_tokens", 0)), int(u.get("completion_tokens", 0)))
        if row.get("error"):
            err = row["error"]
            results.append(ChatResult(text=None, error=f"{wrapper} step {err['step']}: {err['message']}", usage=usage))
        else:
            results.append(ChatResult(text=row["output"], finish_reason="stop", usage=usage))
    return results


def wrapped_engine(spec: ModelSpec, role: str, concurrency: int) -> Engine:
    """An engine (retries, concurrency) for a model a wrapper adapter calls step by step. Its calls go through the
    response cache of the command (``--cache-dir``; none after ``--no-cache``), so an interrupted batch does not
    pay for its finished sub-calls again."""
    from privasis_bench.engine.cache import session_cache

    return Engine(build_adapter(spec), spec, role=role, cache=session_cache(), retry=RetryPolicy(), concurrency=concurrency,
                  progress=False, answers=RECIPE_STEPS)


class DecompAdapter(Adapter):
    """Decomposition-based sanitization around any base model (rankable: reads no gold labels)."""

    provider = "decomp"
    rankable = True
    batched = True

    def __init__(self, model: str, **args: Any) -> None:
        super().__init__(model, **args)
        if not model:
            raise ModelSpecError("decomp needs a wrapped model spec, e.g. decomp:llamacpp:smollm2")
        base_args = dict(args)
        self.recipe = load_recipe(str(base_args.pop("recipe", "decomp")))
        concurrency = int(base_args.pop("inner_concurrency", 2))
        self.base_spec = ModelSpec.parse(model, base_args)
        if self.base_spec.provider == "decomp":
            raise ModelSpecError("decomp cannot wrap itself")
        self.inner = wrapped_engine(self.base_spec, "decomp", concurrency)

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Decompose every request of the batch together (each step runs over the whole batch)."""
        rows = request_rows(requests, "decomp")
        sanitize_batch(rows, self.recipe, lambda reqs, desc: self.inner.run(reqs, desc=f"decomp {desc}"))
        return row_results(rows, "decomp")

    async def aclose(self) -> None:
        """Release the wrapped model."""
        self.inner.close()
