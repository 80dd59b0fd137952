"""The execution engine: concurrency, pacing, retries, caching and progress for every model call.

The model under test and the judge both run through an :class:`Engine`. Adapters only make one call and classify
its errors; the engine decides what happens next:

* cache hits (same spec key, messages and generation settings) come back with ``cached=True`` and cost no call;
  with a cache, identical requests in one run are sent once, and a request that another process sharing the cache
  is already sending is waited for, not sent again;
* transient errors (429, 5xx, timeouts, connection errors, unknown exceptions) are retried with exponential
  backoff and jitter, honouring Retry-After; a server refusing connections from the start stops the run (``reach``);
* authentication / permission errors (401, 403) stop the whole run at once (:class:`FatalModelError`, keys scrubbed);
* other non-retryable errors (400, 404, 422: e.g. a prompt longer than the context) and retries that run out
  become a failed :class:`ChatResult` (``text=None`` plus the error), never an empty success;
* an answer that is empty or cut at the token budget is, by default, a retryable failure and is not cached (see
  :mod:`privasis_bench.engine.answers`), for one-at-a-time and in-process batched adapters alike; a request that
  times out is retried at most ``retry.max_timeouts`` times, with one line on stderr each time;
* every configured secret value is removed from answers before they are cached or handed on.

``on_result(index, result)`` is called as each result lands, so callers can persist it at once."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, TypeVar

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.http_errors import scrub
from privasis_bench.adapters.spec import SECRET_ARGS, ModelSpec
from privasis_bench.engine.answers import ACCEPT_ALL, AnswerPolicy, configured_secrets, redact
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.calls import Pacer, copy_result, finish_result, missing_results
from privasis_bench.engine.loops import LoopBox
from privasis_bench.engine.progress import StageProgress
from privasis_bench.engine.reach import STEP_S as REACH_STEP_S
from privasis_bench.engine.reach import ServerReach
from privasis_bench.engine.retry import FATAL_STATUS, LONG_WAIT_S, FatalModelError, RetryPolicy, fault_kind
from privasis_bench.engine.stats import PAID, BusyClock, EngineStats, usage_by_role
from privasis_bench.engine.stream import RequestStream

__all__ = ["Engine", "EngineStats", "OnResult", "run_together", "usage_by_role"]


_SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|_PASSWORD)$")
OnResult = Callable[[int, ChatResult], None]
T = TypeVar("T")


class Engine:
    """Runs chat requests through one adapter with caching, retries, concurrency and pacing."""

    def __init__(
        self,
        adapter: Adapter,
        spec: ModelSpec,
        *,
        role: str,
        cache: ResponseCache | None,
        retry: RetryPolicy = RetryPolicy(),
        concurrency: int = 4,
        rpm: float | None = None,
        progress: bool = True,
        call_timeout: float | None = None,
        batch_size: int | None = None,
        answers: AnswerPolicy = AnswerPolicy(),
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if rpm is not None and rpm <= 0:
            raise ValueError("rpm must be positive")
        self.adapter, self.spec, self.role = adapter, spec, role
        self.spec_key = spec.cache_identity()  # cache keys ignore transport details (base_url, timeout...)
        self.cache = cache if adapter.cacheable else None
        self.retry, self.concurrency, self.rpm = retry, concurrency, rpm
        self.progress, self.call_timeout = progress, call_timeout
        self.batch_size = batch_size or (1 if adapter.sequential else max(concurrency, 8))
        self.answers = ACCEPT_ALL if adapter.deterministic else answers  # a rule-based baseline's answer is final
        self.stats = EngineStats()
        self.clock = BusyClock()  # for --profile: when calls were in flight
        self.next_slot = 0.0
        self._loop_box: LoopBox | None = None  # the event loop this engine's adapter is bound to (may be shared)
        self._rng = random.Random()
        self._secrets = configured_secrets(spec.args, SECRET_ARGS, _SECRET_ENV)
        self.reach = ServerReach(f"{role} {spec}", retry.wait_for_server)  # a server nothing listens at stops the run

    # ------------------------------------------------------------------ public API
    async def arun(self, requests: Sequence[ChatRequest], *, desc: str, on_result: OnResult | None = None) -> list[ChatResult]:
        """Run every request; results come back in request order (failures included)."""
        requests = list(requests)
        results: list[ChatResult | None] = [None] * len(requests)
        async with self.stream(desc, total=len(requests)) as stream:

            async def one(index: int, request: ChatRequest) -> None:
                result = await stream.ask(request)
                results[index] = result
                if on_result is not None:
                    on_result(index, result)

            tasks = [asyncio.ensure_future(one(i, r)) for i, r in enumerate(requests)]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        if any(r is None for r in results):
            missing_results(results)
        return results  # type: ignore[return-value]

    def stream(self, desc: str, total: int = 0) -> RequestStream:
        """A stage whose requests are asked one by one (``await stream.ask(request)``) under this engine's limits."""
        return RequestStream(self, desc, total)

    def run(self, requests: Sequence[ChatRequest], *, desc: str, on_result: OnResult | None = None) -> list[ChatResult]:
        """Synchronous :meth:`arun` on the engine's own event loop (safe to call repeatedly)."""
        return self.run_async(lambda: self.arun(requests, desc=desc, on_result=on_result))

    def run_async(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make()``, a coroutine that uses this engine, to completion on the engine's own event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._on_own_loop(make)
        with ThreadPoolExecutor(max_workers=1) as pool:  # called from inside a running loop
            return pool.submit(self._on_own_loop, make).result()

    async def aclose(self) -> None:
        """Release the adapter (async form of :meth:`close`)."""
        await self.adapter.aclose()

    def close(self) -> None:
        """Release the adapter and the engine's private event loop (idempotent)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._close_sync()
            return
        with ThreadPoolExecutor(max_workers=1) as pool:  # called from inside a running loop
            pool.submit(self._close_sync).result()

    def _close_sync(self) -> None:
        box, self._loop_box = self._loop_box, None
        if box is None or box.loop.is_closed():
            asyncio.run(self.adapter.aclose())
            return
        box.close_for(self)

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals
    @property
    def interrupted(self) -> bool:
        """Ctrl-C or SIGTERM stopped the loop this engine runs on (see engine/loops.py)."""
        return self._loop_box is not None and self._loop_box.interrupted

    def _on_own_loop(self, make: Callable[[], Awaitable[T]]) -> T:
        return self._box().run(make)

    def _box(self) -> LoopBox:
        if self._loop_box is None or self._loop_box.loop.is_closed():
            self._loop_box = LoopBox(asyncio.new_event_loop(), self)
        return self._loop_box

    def count_result(self, result: ChatResult, bar: StageProgress) -> None:
        """Add one handed-on answer to the stats and the stage's progress."""
        s = self.stats
        s.done += 1
        bar.done += 1
        if result.cached:
            s.cached += 1
            bar.cached += 1
            s.cached_usage.add(result.usage)
        elif not getattr(self.adapter, "sent_in_batches", False):  # a batch broker counts these when they land
            s.usage.add(result.usage)
        bar.tokens += 0 if result.cached else result.usage.total_tokens
        if not result.ok:
            s.failed += 1
            bar.failed += 1
        if not result.cached and not getattr(self.adapter, "sent_in_batches", False):
            PAID.mark()  # the spend ledger saves what this answer cost
        bar.refresh(advance=1)

    def usable_hit(self, hit: ChatResult | None) -> ChatResult | None:
        """A cached answer as handed on, or None when the answer policy asks again (e.g. an empty answer)."""
        if hit is None or self.answers.problem(hit) is not None:
            return None
        hit.text = redact(hit.text, self._secrets)
        return hit

    def store_result(self, key: str, result: ChatResult) -> None:
        """Keep an answer in the response cache when the answer policy says it is worth keeping."""
        if self.cache is not None and self.answers.worth_caching(result):
            self.cache.put(key, self.spec_key, result)

    async def ask_one(self, request: ChatRequest, bar: StageProgress, pacer: Pacer | None) -> ChatResult:
        """One request to a one-at-a-time adapter, with the harness's retries and answer policy."""
        return await self._with_retries(lambda: self._one(request), bar, pacer)

    def _check_grammar(self, requests: list[ChatRequest]) -> None:
        if not self.adapter.constrains and any(r.grammar is not None for r in requests):
            raise AdapterError(f"{self.adapter.provider}: this back-end cannot hold an answer to a grammar "
                               "(the caller asks for constrained answers: use llamacpp: or a llama.cpp server)",
                               retryable=False)

    async def _one(self, request: ChatRequest) -> ChatResult:
        self._check_grammar([request])
        coro = self.adapter.agenerate(request)
        return await (asyncio.wait_for(coro, self.call_timeout) if self.call_timeout else coro)

    async def _batch(self, batch: list[ChatRequest]) -> list[ChatResult]:
        self._check_grammar(batch)
        results = await asyncio.to_thread(self.adapter.generate_batch, batch)
        if len(results) != len(batch):
            raise AdapterError(f"batch returned {len(results)} results for {len(batch)} requests", retryable=False)
        return results

    async def ask_batch(self, requests: list[ChatRequest], bar: StageProgress, pacer: Pacer | None) -> list[ChatResult]:
        """One batch for an in-process adapter, with the same answer policy as one-at-a-time adapters: a request
        whose answer is rejected (cut at the token budget, empty) is asked again in a smaller batch, up to
        ``answers.max_attempts`` tries in all; the tokens of rejected tries are added to its final result."""
        final: list[ChatResult | None] = [None] * len(requests)
        paid = [Usage() for _ in requests]
        pending = list(range(len(requests)))
        for tries in range(1, self.answers.max_attempts + 1):
            outcome = await self._with_retries(lambda: self._batch([requests[i] for i in pending]), bar, pacer,
                                               requests=len(pending) if tries == 1 else 0, raw_batch=True)
            if not isinstance(outcome, tuple):  # the whole batch failed
                for i in pending:
                    usage = Usage()
                    usage.add(outcome.usage)
                    usage.add(paid[i])
                    final[i] = copy_result(outcome, usage=usage)
                break
            results = outcome[0]
            again = []
            for i, result in zip(pending, results):
                problem = self.answers.problem(result)
                if problem is not None and tries < self.answers.max_attempts:
                    paid[i].add(result.usage)
                    self.stats.rejected_answers += 1
                    self.stats.retries += 1
                    bar.retries += 1
                    again.append(i)
                    continue
                self.stats.rejected_answers += problem is not None
                final[i] = self._accept(result, tries, paid[i], problem)
            pending = again
            if not pending:
                break
        return [r if r is not None else ChatResult(text=None, error="no result") for r in final]

    async def _with_retries(self, call: Callable[[], Any], bar: StageProgress, pacer: Pacer | None,
                            requests: int = 1, raw_batch: bool = False) -> Any:
        """Call until an acceptable answer, a non-retryable error or a retry budget runs out.

        ``requests``: how many chat requests the call carries; they count as sent when the first attempt starts (a
        re-ask of a rejected answer is the same request). ``raw_batch``: a batch's results are handed back unjudged,
        with the attempt number, for :meth:`ask_batch`.
        """
        attempt = timeouts = rejected = waits = 0
        paid = Usage()  # tokens of answers that were rejected (empty or cut off): paid for all the same
        while True:
            attempt += 1
            if pacer is not None:
                await pacer.wait()
            if self.interrupted:  # a request freed by the interrupt's cancellations (a concurrency slot) is never sent
                raise asyncio.CancelledError
            if attempt == 1 and not waits and not getattr(self.adapter, "sent_in_batches", False):  # batches: on submit
                self.stats.requests += requests
                PAID.mark()
            self.stats.batches += 1
            answer_rejected = False
            try:
                outcome = await self._timed(call)
            except asyncio.CancelledError:
                raise
            except AdapterError as exc:
                error = exc
            except asyncio.TimeoutError:
                error = AdapterError(f"no reply within {self.call_timeout}s", retryable=True, timeout=True)
            except Exception as exc:  # unknown failures are treated as transient
                error = AdapterError(f"{type(exc).__name__}: {exc}", retryable=True)
            else:
                self.reach.answered = True
                if isinstance(outcome, list) and raw_batch:
                    return outcome, attempt
                if isinstance(outcome, list):  # a batch: an unacceptable answer fails its own request, not retried
                    return [self._accept(r, attempt, Usage(), self.answers.problem(r)) for r in outcome]
                problem = self.answers.problem(outcome)
                if problem is None:
                    return self._accept(outcome, attempt, paid, None)
                paid.add(outcome.usage)
                rejected += 1
                self.stats.rejected_answers += 1
                answer_rejected = True
                error = AdapterError(problem, retryable=True)
            message = self._scrub(str(error))
            if error.refused and self.reach.refused(message, bar.note):  # waiting for a server still starting
                attempt, waits = attempt - 1, waits + 1
                await asyncio.sleep(REACH_STEP_S)
                continue
            self.reach.answered = self.reach.answered or not error.refused
            self.stats.faults[fault_kind(error.status, bool(error.timeout), rejected=answer_rejected)] += 1
            if error.status in FATAL_STATUS:
                raise FatalModelError(str(self.spec), error.status, message)
            timeouts += bool(error.timeout)
            self.stats.timeouts += bool(error.timeout)
            exhausted = (attempt >= self.retry.max_attempts or timeouts >= self.retry.max_timeouts
                         or rejected >= self.answers.max_attempts)
            if not error.retryable or exhausted:
                suffix = f" (gave up after {attempt} attempts)" if error.retryable else ""
                return ChatResult(text=None, error=message + suffix, attempts=attempt, usage=paid)
            delay = self.retry.delay(attempt, error.retry_after, self._rng)
            self.stats.retries += 1
            bar.retries += 1
            bar.refresh()
            if error.timeout:
                flag = "--model-args" if self.role == "model" else "--judge-args"
                bar.note(f"{self.role} {self.spec}: {message}; retrying in {delay:.1f}s (timeout {timeouts} of at most "
                         f"{self.retry.max_timeouts}; a slow model needs {flag} timeout=SECONDS)")
            elif delay >= LONG_WAIT_S or self.retry.capped(error.retry_after):
                bar.note(self.retry.wait_line(f"{self.role} {self.spec}", message, attempt, error.retry_after, delay))
            await asyncio.sleep(delay)

    async def _timed(self, call: Callable[[], Any]) -> Any:
        started = self.clock.start()
        try:
            return await call()
        finally:
            self.clock.stop(started)

    def _accept(self, result: ChatResult, attempt: int, paid: Usage, problem: str | None) -> ChatResult:
        """A fresh answer as handed on: normalized, secrets removed, rejected tries' tokens added."""
        finish_result(result, attempt, self._scrub)
        result.text = redact(result.text, self._secrets)
        result.usage.add(paid)
        if problem is not None:
            result.text, result.error = None, problem
        elif result.ok and result.finish_reason == "length":
            self.stats.truncated += 1
        return result

    def _scrub(self, message: str) -> str:
        return scrub(message, self._secrets)


def run_together(engines: Sequence["Engine | None"], make: Callable[[], Awaitable[T]]) -> T:
    """Run ``make()``, a coroutine using several engines at once, on one event loop they all share from now on.

    Adapters hold connections bound to the loop they first ran on, so engines that work together must stay on
    one loop: the first engine's loop is adopted by the others (an engine already bound to another live loop
    is an error). At least one engine is required.
    """
    live = [e for e in dict.fromkeys(engines) if e is not None]
    if not live:
        raise ValueError("run_together needs at least one engine")
    first = live[0]
    box = first._box()
    for engine in live[1:]:
        own = engine._loop_box
        if own is box:
            continue
        if own is not None and not own.loop.is_closed():
            raise RuntimeError(f"engine bug: {engine.role} {engine.spec} already runs on another event loop")
        engine._loop_box = box
        box.join(engine)
    return first.run_async(make)
