"""Per-request calls through an engine, for pipelines in which each request is made as soon as it is known.

A :class:`RequestStream` is opened for one stage (``async with engine.stream(desc) as stream``); any number of
coroutines then ``await stream.ask(request)`` concurrently. Everything the engine owns still applies to each
request: the response cache (hits cost nothing), one call for identical requests in flight at the same time, a
claim in a shared cache so another process does not pay for the same request, the concurrency limit, pacing,
retries and the progress bar. For adapters that answer in batches (an offline engine), the requests that arrive
while the event loop is busy are gathered and sent as one batch.
"""

from __future__ import annotations

import asyncio

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.engine.calls import CallingEngine, Pacer, copy_result
from privasis_bench.engine.claims import claim_or_wait
from privasis_bench.engine.progress import StageProgress
from privasis_bench.engine.retry import FatalModelError


class RequestStream:
    """Shared limits and bookkeeping for the requests of one stage."""

    def __init__(self, engine: CallingEngine, desc: str, total: int = 0) -> None:
        self.engine = engine
        self.bar = StageProgress(desc, total, engine.progress)
        self.pacer = Pacer(engine, 60.0 / engine.rpm, self.bar.note, desc) if engine.rpm else None
        self.semaphore = asyncio.Semaphore(engine.concurrency)
        self.stop = asyncio.Event()  # set on a fatal error so no waiting request starts another call
        self._inflight: dict[str, asyncio.Future] = {}
        self._batch: list[tuple[ChatRequest, asyncio.Future]] = []
        self._flush_scheduled = False
        self._dynamic_total = total == 0

    async def __aenter__(self) -> "RequestStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.bar.close()

    async def ask(self, request: ChatRequest) -> ChatResult:
        """The engine's answer to one request (a failed call is a failed result, never an exception)."""
        engine = self.engine
        engine.stats.asked += 1  # counted as a request only when it is sent (RequestStream._call)
        if self._dynamic_total:
            self.bar.add_total(1)
        key = request.cache_key(engine.spec_key) if engine.cache is not None else None
        if key is not None:
            hit = engine.usable_hit(engine.cache.get(key))
            if hit is not None:
                return self._land(copy_result(hit, cached=True))
            twin = self._inflight.get(key)
            if twin is not None:  # the same request is being answered right now: share its answer
                result = await asyncio.shield(twin)
                return self._land(copy_result(result, cached=result.ok, usage=Usage()))
            future = asyncio.get_running_loop().create_future()
            self._inflight[key] = future
            try:
                result = await self._call(key, request)
            except BaseException as exc:
                future.set_exception(exc)
                future.exception()  # retrieved: a twin re-raises it, nobody else needs to
                raise
            finally:
                self._inflight.pop(key, None)
            future.set_result(result)
            return self._land(result)
        return self._land(await self._call(None, request))

    def _land(self, result: ChatResult) -> ChatResult:
        self.engine.count_result(result, self.bar)
        return result

    async def _call(self, key: str | None, request: ChatRequest) -> ChatResult:
        engine = self.engine
        if key is not None:  # another process sharing the cache may be paying for this very request
            hit = await claim_or_wait(engine.cache, key, engine.usable_hit, self.stop)
            if hit is not None:
                return copy_result(hit, cached=True)
        try:
            if engine.adapter.batched:
                result = await self._batched(request)
            else:
                async with self.semaphore:
                    if self.stop.is_set():
                        return ChatResult(text=None, error="the run stopped before this request was sent")
                    try:
                        result = await engine.ask_one(request, self.bar, self.pacer)
                    except FatalModelError:
                        self.stop.set()
                        raise
            if key is not None:
                engine.store_result(key, result)
            return result
        finally:
            if key is not None:
                engine.cache.release(key)

    async def _batched(self, request: ChatRequest) -> ChatResult:
        """Queue the request; the queue is flushed as one batch once the loop has run every ready coroutine."""
        future = asyncio.get_running_loop().create_future()
        self._batch.append((request, future))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._flush()))
        return await future

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # let coroutines woken in the same round add their requests too
        self._flush_scheduled = False
        queued, self._batch = self._batch, []
        engine = self.engine
        for start in range(0, len(queued), engine.batch_size):
            chunk = queued[start : start + engine.batch_size]
            try:
                outcome = await engine.ask_batch([r for r, _ in chunk], self.bar, self.pacer)
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting request
                for _, future in chunk:
                    if not future.done():
                        future.set_exception(exc)
                continue
            results = outcome if isinstance(outcome, list) else [copy_result(outcome) for _ in chunk]
            for (_, future), result in zip(chunk, results):
                if not future.done():
                    future.set_result(result)
            await asyncio.sleep(0)  # the waiting requests store their answers before the next chunk starts
