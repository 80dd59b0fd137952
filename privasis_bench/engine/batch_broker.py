"""Provider batches for one engine: group pending requests, submit, poll, and hand each answer on as a live one.

A :class:`BatchBroker` sits where a live call would be made (see :mod:`privasis_bench.engine.batching`): every
request the engine would send is queued instead; a batch goes out when ``size`` requests wait, when no new request
came for ``quiet`` seconds (a wave of the record flow is complete: the model's outputs, then each of the judge's
three tiers), or when the oldest has waited ``max_wait`` seconds, with at most ``max_in_flight`` batches out at
once. Each batch is written to the cache's ``batches`` table before it is submitted, and created and recorded before
the next one is created (:mod:`.batch_create`, :mod:`.batch_store`); its
answers go into the response cache as soon as it ends, then to the waiting records; its row is removed last. On
start the broker first collects the batches earlier runs left in flight. Per-request errors, and requests an
expired, cancelled or failed batch left unanswered, come back as classified :class:`AdapterError` s, so the engine
retries them (in a later batch) under its usual retry budget.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from privasis_bench.adapters.base import AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.batch_api import BatchClient
from privasis_bench.engine.batch_create import BatchCreator
from privasis_bench.engine.batch_store import BatchStore, custom_id
from privasis_bench.engine.calls import copy_result
from privasis_bench.engine.retry import FATAL_STATUS, RetryPolicy

#: How often a failed look-up of an unrecorded batch, or a failed results download, is tried before giving up.
LOOKUP_TRIES = 3
#: A refused submission with one of these statuses is about the batch's size or a rate limit: the batch is split.
SPLIT_STATUS = frozenset({413, 429})


class BatchesDetached(BaseException):
    """``--batch-detach``: every pending request is in a submitted batch; the run stops here (not an error)."""


@dataclass(frozen=True)
class BatchOptions:
    """How requests are grouped into provider batches (``--batch`` and its options)."""

    roles: frozenset[str] = frozenset()  # "model", "judge"
    size: int = 1000  # most requests in one batch (the provider's own limits split further)
    max_wait: float = 60.0  # seconds the oldest queued request waits before a partial batch is sent
    quiet: float = 2.0  # a partial batch is sent once no new request arrived for this many seconds
    poll: float = 30.0  # seconds between status checks of a batch
    max_in_flight: int = 8  # batches submitted and not yet ended, per engine
    detach: bool = False  # stop once everything pending is submitted (a later identical run collects)
    abandon: bool = False  # forget the batches earlier runs left in flight (paid for; their answers are not used)
    cache_file: str | None = None  # where those are recorded (looked at even under --no-cache)

    def __post_init__(self) -> None:
        if self.size < 1 or self.max_in_flight < 1:
            raise ValueError("batch size and batches in flight must be at least 1")
        if min(self.max_wait, self.quiet, self.poll) < 0:
            raise ValueError("batch waits must not be negative")


@dataclass
class BatchCounts:
    """What the broker did (progress lines, results, benchmarks)."""

    submitted: int = 0
    completed: int = 0
    recovered: int = 0
    requests: int = 0  # requests sent in batches
    answered: int = 0  # answers that came back
    round_trips: int = 0  # submit + polls + downloads
    pending: dict[str, float] = field(default_factory=dict)  # provider id -> when it was submitted (monotonic)


class BatchBroker:
    """Queues one engine's requests into provider batches (one instance per engine, on its event loop)."""

    def __init__(self, client: BatchClient, store: BatchStore, *, spec_key: str, role: str, label: str,
                 options: BatchOptions, keep: Callable[[str, ChatResult], None],
                 note: Callable[[str], None] | None = None, on_sent: Callable[[int], None] | None = None,
                 retry: RetryPolicy = RetryPolicy(), on_paid: Callable[[Usage], None] | None = None) -> None:
        self.client, self.store, self.spec_key, self.role, self.label = client, store, spec_key, role, label
        self.options, self.keep, self.note, self.on_sent, self.retry = options, keep, note, on_sent, retry
        self.counts = BatchCounts()
        self._queue: list[tuple[str, ChatRequest, int]] = []  # (key, request, line bytes)
        self._futures: dict[str, asyncio.Future] = {}
        self._flying: set[str] = set()  # keys in a batch out at the provider
        self.creator = BatchCreator(client, store, spec_key=spec_key, role=role, on_sent=on_sent, keep=keep,
                                    on_paid=on_paid)
        #: Answers that came back before anyone asked for them (a batch an earlier run left in flight, collected while
        #: the engine was still on its way to those requests): handed over on the ask instead of being asked again.
        self._early: dict[str, ChatResult] = {}
        self._first = self._last = 0.0
        self._wake: asyncio.Event | None = None
        self._slots: asyncio.Semaphore | None = None
        self._flusher: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self._started: asyncio.Lock | None = None
        self._recovered = False
        self._detached = False

    # ------------------------------------------------------------------ asking
    async def ask(self, request: ChatRequest) -> ChatResult:
        """The answer to one request, from a batch (raises AdapterError like a live call)."""
        await self._recover()
        key = request.cache_key(self.spec_key)
        early = self._early.pop(key, None)
        if early is not None:
            return copy_result(early)
        future = self._futures.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._futures[key] = future
            if key not in self._flying:  # not already in a batch an earlier run submitted
                self._enqueue(key, request)
        outcome = await asyncio.shield(future)
        return copy_result(outcome)

    def _enqueue(self, key: str, request: ChatRequest) -> None:
        if self._detached:
            self._fail([key], BatchesDetached(self._detach_line()))
            return
        now = time.monotonic()
        if not self._queue:
            self._first = now
        self._last = now
        size = len(json.dumps(self.client.line(custom_id(0), request), ensure_ascii=False).encode("utf-8")) + 1
        self._queue.append((key, request, size))
        assert self._wake is not None
        self._wake.set()
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush_loop())

    async def _flush_loop(self) -> None:
        assert self._wake is not None and self._slots is not None
        limit = min(self.options.size, self.client.max_requests)
        while self._queue:
            while len(self._queue) < limit:
                due = min(self._last + self.options.quiet, self._first + self.options.max_wait)
                left = due - time.monotonic()
                if left <= 0:
                    break
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), left)
                except asyncio.TimeoutError:
                    pass
            await self._slots.acquire()
            chunk = self._take(limit)
            if not chunk:
                self._slots.release()
                continue
            self._spawn(self._submit_and_collect(chunk))

    def _take(self, limit: int) -> list[tuple[str, ChatRequest]]:
        """The next batch: at most ``limit`` requests and the provider's byte limit."""
        taken, total = [], 0
        while self._queue and len(taken) < limit:
            key, request, size = self._queue[0]
            if taken and total + size > self.client.max_bytes:
                break
            self._queue.pop(0)
            taken.append((key, request))
            total += size
        if self._queue:
            self._first = time.monotonic()
        return taken

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ one batch
    async def _submit_and_collect(self, chunk: list[tuple[str, ChatRequest]], depth: int = 0,
                                  retried: bool = False) -> None:
        """Submit one batch (holding a slot, released here) and collect it; ``depth``: how often it was refused as a
        whole before, ``retried``: whether its last refusal (a rate limit) was answered by sending it again whole."""
        assert self._slots is not None
        keys = [k for k, _ in chunk]
        try:
            lines = [self.client.line(custom_id(i), r) for i, (_, r) in enumerate(chunk)]
            self._flying.update(keys)
            self.counts.round_trips += 1
            made = await asyncio.to_thread(self.creator.create, lines, keys)
            if made.error is not None:
                exc = made.error
                lost = exc.status is None or exc.status >= 500  # no reply: the batch may exist all the same
                batch_id = await self._look_up(made.tag) if lost else None
                if batch_id is None:
                    self.store.remove(made.tag)
                    if not (exc.status in SPLIT_STATUS and self._split(chunk, exc, depth, retried)):
                        self._fail(keys, exc)
                    return
                made = await asyncio.to_thread(self.creator.record, made.tag, batch_id, keys, True)
            if made.stopped or made.batch_id is None:  # interrupted: nothing more is created or counted
                self._cancel(keys)
                return
            batch_id = made.batch_id
            self.counts.submitted += 1
            self.counts.requests += len(keys)
            self.counts.pending[batch_id] = time.monotonic()
            self._say(f"submitted batch {batch_id} ({len(keys)} requests)")
            await self._collect(made.tag, batch_id, keys, chunk, depth, retried)
        finally:
            self._slots.release()

    def _split(self, chunk: list[tuple[str, ChatRequest]], exc: AdapterError, depth: int, retried: bool) -> bool:
        """A batch refused or failed as a whole: its two halves go out as new batches. A rate limit (retryable) is
        first answered by sending the batch again whole after the usual back-off, and split only when refused again.
        False when it holds one request (that request's error is then its own)."""
        if len(chunk) < 2 or exc.status in FATAL_STATUS:
            return False
        delay = self.retry.delay(depth + 1, exc.retry_after) if exc.retryable else 0.0
        if exc.retryable and not retried:
            self._say(f"a batch of {len(chunk)} requests was refused as a whole ({exc}); sent again in {delay:.1f}s")
            self._spawn(self._resubmit(chunk, delay, depth + 1, True))
            return True
        half = (len(chunk) + 1) // 2
        self._say(f"a batch of {len(chunk)} requests was refused as a whole ({exc}); sent again as two batches of "
                  f"{half} and {len(chunk) - half}" + (f" in {delay:.1f}s" if delay else ""))
        for part in (chunk[:half], chunk[half:]):
            self._spawn(self._resubmit(part, delay, depth + 1, False))
        return True

    async def _resubmit(self, chunk: list[tuple[str, ChatRequest]], delay: float, depth: int, retried: bool) -> None:
        assert self._slots is not None
        await asyncio.sleep(delay)
        await self._slots.acquire()
        await self._submit_and_collect(chunk, depth, retried)

    async def _look_up(self, tag: str) -> str | None:
        for attempt in range(LOOKUP_TRIES):
            try:
                self.counts.round_trips += 1
                return await asyncio.to_thread(self.client.find, tag, self.store.known_ids())
            except AdapterError:
                await asyncio.sleep(min(1.0 * (attempt + 1), self.options.poll))
        return None

    async def _collect(self, tag: str, batch_id: str, keys: list[str],
                       chunk: list[tuple[str, ChatRequest]] | None = None, depth: int = 0, retried: bool = False) -> None:
        """Poll until the batch ends, store its answers, hand them on, forget the batch (``chunk``: its requests,
        when this run submitted it; a batch that failed as a whole is then split)."""
        self.counts.pending.setdefault(batch_id, time.monotonic())
        seen = None
        while True:
            try:
                self.counts.round_trips += 1
                state = await asyncio.to_thread(self.client.poll, batch_id)
            except AdapterError as exc:
                if exc.status in FATAL_STATUS:  # the row stays: a run with a working key collects the batch
                    self._fail(keys, exc)
                    return
                if not exc.retryable:  # e.g. 404: the provider no longer knows the batch; its requests are asked anew
                    self.store.remove(tag)
                    self.counts.pending.pop(batch_id, None)
                    self._say(f"batch {batch_id} is gone ({exc}); its requests are asked again")
                    self._fail(keys, AdapterError(f"{self.role} batch {batch_id} is gone: {exc}", retryable=True))
                    return
                state = None  # a transient failure: polled again at the next interval
            if state is not None and (state.status, state.answered) != seen:
                seen = (state.status, state.answered)
                self._say(f"batch {batch_id} {state.status} ({state.answered}/{state.total} answered)")
            if state is not None and state.ended:
                break
            if self.options.detach and not self._queue and self._all_submitted():
                self._detach()
                return
            await asyncio.sleep(self.options.poll)
        if state.error is not None:  # the provider ran none of it
            self.store.remove(tag)
            self.counts.pending.pop(batch_id, None)
            self.counts.completed += 1
            if chunk is None or not self._split(chunk, state.error, depth, retried):
                error = state.error if len(keys) == 1 else AdapterError(str(state.error), retryable=True)
                self._say(f"batch {batch_id} failed as a whole: {state.error}")
                self._fail(keys, error)  # one request: its own error; a recovered batch's: asked again (and split)
            return
        outcomes = await self._results(batch_id)
        found: dict[str, ChatResult | AdapterError] = {}
        for i, key in enumerate(keys):
            outcome = outcomes.get(custom_id(i)) if outcomes is not None else None
            if outcome is None:
                why = "its result file could not be read" if outcomes is None else "it holds no answer for it"
                outcome = AdapterError(f"{self.role} batch {batch_id} ended {state.status} and {why}; asked again",
                                       retryable=True)
            found[key] = outcome
        answers = {k: o for k, o in found.items() if isinstance(o, ChatResult)}
        # Into the response cache and counted, the batch's row removed, before anything is handed on.
        if not await asyncio.to_thread(self.creator.land, tag, answers):  # interrupted: the next run collects it
            self._cancel(keys)
            return
        answered = len(answers)
        for key, outcome in found.items():
            self._resolve(key, outcome)
        self.counts.pending.pop(batch_id, None)
        self.counts.completed += 1
        self.counts.answered += answered
        self._say(f"batch {batch_id} {state.status}: {answered} of {len(keys)} requests answered")

    async def _results(self, batch_id: str) -> dict[str, ChatResult | AdapterError] | None:
        for attempt in range(LOOKUP_TRIES):
            try:
                self.counts.round_trips += 1
                return await asyncio.to_thread(self.client.results, batch_id)
            except AdapterError:
                if attempt + 1 < LOOKUP_TRIES:
                    await asyncio.sleep(min(1.0 * (attempt + 1), self.options.poll))
        return None

    # ------------------------------------------------------------------ resume
    async def _recover(self) -> None:
        """Once, before anything is submitted: take up the batches earlier runs left in flight."""
        if self._recovered:
            return
        if self._started is None:
            self._started = asyncio.Lock()
            self._wake = asyncio.Event()
            self._slots = asyncio.Semaphore(self.options.max_in_flight)
        async with self._started:
            if self._recovered:
                return
            for row in self.store.rows(self.spec_key, self.role):
                batch_id = row.provider_id or await self._look_up(row.tag)
                if batch_id is None:  # never created: nothing was paid, its requests are asked anew
                    self.store.remove(row.tag)
                    continue
                if row.provider_id is None:  # the run that created it died before it counted it: counted here
                    made = await asyncio.to_thread(self.creator.record, row.tag, batch_id, row.keys, True)
                    if made.stopped:
                        return
                else:  # counted by the run that learnt its id (its ledger entry has it)
                    self.creator.counted.update(row.keys)
                self._flying.update(row.keys)
                self.counts.recovered += 1
                self._spawn(self._collect(row.tag, batch_id, row.keys))
            if self.counts.recovered:
                self._say(f"collecting {self.counts.recovered} batch(es) an earlier run left in flight")
            self._recovered = True

    # ------------------------------------------------------------------ hand-over
    def _resolve(self, key: str, outcome: ChatResult | AdapterError) -> None:
        self._flying.discard(key)
        future = self._futures.pop(key, None)
        if future is None and isinstance(outcome, ChatResult):
            self._early[key] = outcome
        if future is None or future.done():
            return
        if isinstance(outcome, ChatResult):
            future.set_result(outcome)
        else:
            future.set_exception(outcome)

    def _fail(self, keys: list[str], exc: BaseException) -> None:
        for key in keys:
            self._flying.discard(key)
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                future.set_exception(exc)

    def _cancel(self, keys: list[str]) -> None:
        for key in keys:
            self._flying.discard(key)
            future = self._futures.pop(key, None)
            if future is not None and not future.done():
                future.cancel()

    def _all_submitted(self) -> bool:
        """No batch is being submitted right now: every live task is polling a batch the provider accepted."""
        live = [t for t in self._tasks if not t.done()]
        return len(self.counts.pending) >= len(live)

    def _detach(self) -> None:
        self._detached = True
        self._fail(list(self._futures), BatchesDetached(self._detach_line()))

    def _detach_line(self) -> str:
        return (f"{self.role} {self.label}: {len(self.counts.pending)} batch(es) submitted and pending "
                "(--batch-detach); run the same command again to collect them")

    def _say(self, event: str) -> None:
        if self.note is None:
            return
        now = time.monotonic()
        ages = [now - t for t in self.counts.pending.values()]
        oldest = f", oldest {int(max(ages))}s" if ages else ""
        c = self.counts
        self.note(f"[batch {self.role} {self.label}] {event} | {c.submitted} submitted, {len(c.pending)} pending{oldest}, "
                  f"{c.completed} completed, {c.answered} requests answered")

    async def aclose(self) -> None:
        """Stop polling (batches still out stay recorded in the cache and are collected by the next run)."""
        for task in list(self._tasks) + ([self._flusher] if self._flusher else []):
            task.cancel()
        self.store.close()
