"""Calling a model for one recipe step over a batch of rows, and reading its answers.

A row is a plain JSON-ready dict. A step builds zero or more :class:`Call` objects per live row, sends all of
them in one batch through an :data:`Ask` (an engine), and hands each answer to its call's ``apply``. A failed
call or an answer ``apply`` cannot read marks *that row* failed (``row["error"] = {"step", "message"}``); later
steps skip failed rows, and the driver writes them to the failures file. Nothing here keeps state between
batches.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.protocol.judge_prompts import render
from privasis_bench.recipes.config import RecipeConfig

#: Runs a batch of requests (with a progress label) and returns one result per request, in order.
Ask = Callable[[list[ChatRequest], str], list[ChatResult]]


class StepFailure(Exception):
    """An answer a step cannot use; the row fails with this message."""


@dataclass
class Call:
    """One model request on behalf of ``row``; ``apply`` reads the answer text (raising StepFailure)."""

    row: dict[str, Any]
    request: ChatRequest
    apply: Callable[[str], None]


def engine_ask(engine: Any) -> Ask:
    """An :data:`Ask` backed by an :class:`~privasis_bench.engine.executor.Engine` (cache, retries, concurrency)."""
    return lambda requests, desc: engine.run(requests, desc=desc)


def alive(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows no earlier step has failed."""
    return [r for r in rows if not r.get("error")]


def fail(row: dict[str, Any], step: str, message: str) -> None:
    """Mark ``row`` failed at ``step`` (the first failure is kept)."""
    if not row.get("error"):
        row["error"] = {"step": step, "message": message}


def row_rng(seed: int, row_id: str, step: str, round_: int = 0) -> np.random.Generator:
    """A generator that depends only on the recipe seed, the row id, the step and the row's retry round (round 0,
    a row's first attempt, keeps the key it always had; no global state)."""
    key = f"{seed}/{row_id}/{step}" + (f"/round{round_}" if round_ else "")
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def rng_for(seed: int, row: dict[str, Any], step: str) -> np.random.Generator:
    """:func:`row_rng` for a working row (its id and retry round)."""
    return row_rng(seed, row["id"], step, int(row.get("round", 0)))


def draw_seed(recipe_seed: int, row: dict[str, Any], label: str) -> int:
    """The sampling seed of one draw: a function of the recipe seed, the row id, the row's retry round and the
    draw's label (e.g. ``"revise 2"``), so every attempt is a new sample and a re-run repeats it exactly."""
    key = f"{recipe_seed}/{row['id']}/{int(row.get('round', 0))}/{label}"
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "big") & 0x7FFFFFFF


def make_request(recipe: RecipeConfig, step: str, *, temperature: float | None = None, max_tokens: int | None = None,
                 row: dict[str, Any] | None = None, draw: str | None = None, **fields: Any) -> ChatRequest:
    """The step's template with ``fields`` filled in, as one user message with the step's settings.

    ``max_tokens`` can only lower the step's budget (e.g. to fit the length of the text being rewritten). A step
    that samples (temperature above 0) on behalf of ``row`` gets a seed from :func:`draw_seed` (label ``draw``,
    default the step name): the seed is part of the request and of its cache key, so two attempts at the same
    prompt are two samples, while a re-run of the same command finds each attempt in the cache."""
    gen = recipe.step(step)
    prompt = render(recipe.prompt(step), **{k: str(v) for k, v in fields.items()})
    budget = gen.max_tokens if max_tokens is None else min(gen.max_tokens, max_tokens)
    temp = gen.temperature if temperature is None else temperature
    seed = draw_seed(recipe.seed, row, draw or step) if row is not None and temp > 0 else None
    return ChatRequest.user(prompt, max_tokens=budget, temperature=temp, seed=seed)


def run_calls(calls: list[Call], ask: Ask, step: str) -> None:
    """Send every call in one batch; record each answer, failure and its token usage on its row.

    A row's usage is what its calls cost when they were made (an answer from the cache counts the tokens it cost
    then), so a resumed run writes the same rows as an uninterrupted one; what an invocation actually paid is in
    the engine's statistics and the spend ledger."""
    if not calls:
        return
    results = ask([c.request for c in calls], step)
    for call, result in zip(calls, results, strict=True):
        usage = call.row.setdefault("usage", {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        usage["calls"] += 1
        usage["prompt_tokens"] += result.usage.prompt_tokens
        usage["completion_tokens"] += result.usage.completion_tokens
        if call.row.get("error"):
            continue
        if not result.ok:
            fail(call.row, step, f"model call failed: {result.error}")
            continue
        try:
            call.apply(clean_answer(result.text or ""))
        except StepFailure as exc:
            fail(call.row, step, str(exc))


# -- reading answers -------------------------------------------------------------------------------
_THINK = "</think>"
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?|\n?```\s*$")
_ITEM = re.compile(r"^\s*(?:\d{1,3}[.):]|[-*•+])\s+(.*\S)\s*$")
_KEY_VALUE = re.compile(r"^\s*(?:[-*•]\s*|\d{1,3}[.)]\s*)?\**([A-Za-z][^:\n]{0,60}?)\**\s*:\s*(.+?)\s*$")
REFUSAL = re.compile(r"\b(I'?m sorry|I am sorry|I can(?:no|')t (?:help|assist|create|provide|generate)|as an AI\b|I'?m unable to)", re.I)


def clean_answer(text: str) -> str:
    """The answer after the last ``</think>``, without surrounding code fences and whitespace."""
    if _THINK in text:
        text = text.rsplit(_THINK, 1)[1]
    return _FENCE.sub("", text.strip()).strip()


def list_items(text: str, *, limit: int | None = None) -> list[str]:
    """Items of a numbered or bulleted list; without list markers, the non-empty lines."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    items = [m.group(1).strip(" *\"'") for ln in lines if (m := _ITEM.match(ln))]
    if not items:
        items = [ln.strip(" *\"'") for ln in lines]
    items = [i for i in items if i and not i.endswith(":")]
    return items[:limit] if limit else items


def key_values(text: str) -> dict[str, str]:
    """``Key: value`` lines as a dict with snake_case keys (first occurrence wins; empty values skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _KEY_VALUE.match(line)
        if not m:
            continue
        key = snake(m.group(1))
        value = m.group(2).strip(" *\"'")
        if key and value and key not in out:
            out[key] = value
    return out


def snake(name: str) -> str:
    """``"ID Number"`` -> ``"id_number"``."""
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def match_name(answer: str, names: Sequence[str], cutoff: float = 85.0) -> str | None:
    """The known name an answer line refers to (exact, snake_case, or close by rapidfuzz), if any."""
    if answer in names:
        return answer
    key = snake(answer)
    by_key = {snake(n): n for n in names}
    if key in by_key:
        return by_key[key]
    from rapidfuzz import fuzz, process

    found = process.extractOne(key, list(by_key), scorer=fuzz.ratio, score_cutoff=cutoff)
    return by_key[found[0]] if found else None


def ranked_names(answer: str, names: Sequence[str]) -> list[str]:
    """Known names in the order an answer lists them (each once; unknown lines ignored)."""
    order: list[str] = []
    for item in list_items(answer):
        name = match_name(item.split(" - ")[0].split(":")[0].strip(), names)
        if name is not None and name not in order:
            order.append(name)
    return order
