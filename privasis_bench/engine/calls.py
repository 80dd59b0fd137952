"""Helpers shared by the engine's batch calls (:mod:`.executor`) and per-request calls (:mod:`.stream`).

:class:`CallingEngine`, the small interface the stream drives (the executor's :class:`~.executor.Engine` offers
it), pacing of call starts, normalizing a fresh adapter result, copying a result for another requester, and the
guard that every request got a result. The engine reads top-down: ``executor`` imports ``stream``, both import
this module, and ``stream`` never imports ``executor``.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Callable, Protocol

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult, Usage

if TYPE_CHECKING:
    from privasis_bench.engine.cache import ResponseCache
    from privasis_bench.engine.progress import StageProgress
    from privasis_bench.engine.stats import EngineStats


class CallingEngine(Protocol):
    """What a request stream needs from its engine: its limits and settings, the cache rules, and the two calls."""

    adapter: Adapter
    spec_key: str
    cache: "ResponseCache | None"
    stats: "EngineStats"
    concurrency: int
    batch_size: int
    rpm: float | None
    progress: bool
    next_slot: float

    def usable_hit(self, hit: ChatResult | None) -> ChatResult | None:
        """A cached answer as handed on, or None when it must be asked again."""

    def store_result(self, key: str, result: ChatResult) -> None:
        """Keep an answer in the cache when it is worth keeping."""

    def count_result(self, result: ChatResult, bar: "StageProgress") -> None:
        """Add one handed-on answer to the stats and the stage's progress."""

    async def ask_one(self, request: ChatRequest, bar: "StageProgress", pacer: "Pacer | None") -> ChatResult:
        """One request to a one-at-a-time adapter, with retries."""

    async def ask_batch(self, requests: list[ChatRequest], bar: "StageProgress", pacer: "Pacer | None") -> list[ChatResult]:
        """One batch for an in-process adapter, with retries."""


#: A pacing wait at least this long is told in one line (what waits, for how long, and why).
PACING_NOTE_S = 10.0


class Pacer:
    """Spaces call starts at least ``60 / rpm`` seconds apart (shared by all workers).

    ``note`` receives one line whenever a start waits :data:`PACING_NOTE_S` seconds or more, so a slow pace is
    never silence; ``what`` names the stage in that line.
    """

    def __init__(self, engine: CallingEngine, interval: float, note: Callable[[str], None] | None = None,
                 what: str = "") -> None:
        self.engine, self.interval, self.lock = engine, interval, asyncio.Lock()
        self.note, self.what = note, what

    async def wait(self) -> None:
        """Wait until the next call may start (starts are released one at a time, in order)."""
        async with self.lock:  # held while sleeping: starts are released one at a time, in order
            delay = self.engine.next_slot - time.monotonic()
            if delay > 0:
                if delay >= PACING_NOTE_S and self.note is not None:
                    rpm = 60.0 / self.interval
                    self.note(f"[{self.what}] pacing: the next request starts in {delay:,.0f} s "
                              f"(at most {rpm:g} requests per minute, one every {self.interval:,.0f} s)")
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
