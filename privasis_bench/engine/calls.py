"""Helpers shared by the engine's batch calls (:mod:`.executor`) and per-request calls (:mod:`.stream`).

Pacing of call starts, normalizing a fresh adapter result, copying a result for another requester, and the
guard that every request got a result. Both modules import them from here; neither imports the other's privates.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from privasis_bench.adapters.base import ChatResult, Usage


class Pacer:
    """Spaces call starts at least ``60 / rpm`` seconds apart (shared by all workers)."""

    def __init__(self, engine: Any, interval: float) -> None:
        self.engine, self.interval, self.lock = engine, interval, asyncio.Lock()

    async def wait(self) -> None:
        async with self.lock:  # held while sleeping: starts are released one at a time, in order
            delay = self.engine.next_slot - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self.engine.next_slot = time.monotonic() + self.interval


def finish_result(result: ChatResult, attempt: int, scrubber: Callable[[str], str]) -> None:
    """Normalize a fresh adapter result: attempts, not cached, failures always carry an error."""
    result.attempts = attempt
    result.cached = False
    if result.text is None and not result.error:
        result.error = "the adapter returned no text"
    if result.error:
        result.error = scrubber(result.error)
        result.text = None



def copy_result(result: ChatResult, *, cached: bool | None = None, usage: Usage | None = None) -> ChatResult:
    """A copy of ``result`` (for another requester or a cache hit), optionally marked cached or with other usage."""
    u = usage if usage is not None else result.usage
    return ChatResult(
        text=result.text,
        finish_reason=result.finish_reason,
        usage=Usage(u.prompt_tokens, u.completion_tokens),
        error=result.error,
        cached=result.cached if cached is None else cached,
        attempts=result.attempts,
        spans=list(result.spans) if result.spans is not None else None,
        replacements=list(result.replacements) if result.replacements is not None else None,
    )



def missing_results(results: list[ChatResult | None]) -> None:
    """Raise: some request got no result (an engine bug, never a silent gap)."""
    missing = [i for i, r in enumerate(results) if r is None]
    raise RuntimeError(f"engine bug: no result for request(s) {missing[:5]}")
