"""The record flow: every record moves to its next step as soon as its previous one is done.

A run is not a sequence of stage barriers. Each record is sanitized (or its saved output reused), its output goes
straight to the judge, whose per-attribute question chains move on as their own answers arrive, and the record is
handed on, in record order, to whatever writes the results. The model and the judge work at the same time, each
under its own concurrency limit; at most ``window`` records are between reading and writing, so memory does not
grow with the size of the task.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.data.records import Record
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.engine.executor import Engine, run_together
from privasis_bench.pipeline.sanitize import OutputJournal, SanitizedOutput
from privasis_bench.protocol.judge import run_sync

T = TypeVar("T")
R = TypeVar("R")

async def ordered_flow(items: Iterable[T], work: Callable[[T], Awaitable[R] | None],
                       emit: Callable[[T, R | None], None], *, window: int) -> None:
    """Process items concurrently, at most ``window`` at a time, and ``emit`` each one in input order.

    An item is emitted as soon as it and every item before it are done. If any item's work raises, the work
    still in flight is cancelled and the exception propagates (items already emitted stay emitted).
    """
    if window < 1:
        raise ValueError("window must be at least 1")
    pending: deque[tuple[T, asyncio.Task | None]] = deque()
    active = 0

    async def emit_head() -> None:
        nonlocal active
        item, task = pending.popleft()
        if task is None:
            emit(item, None)
            return
        active -= 1
        emit(item, await task)

    try:
        for item in items:
            coro = work(item)
            task = asyncio.ensure_future(coro) if coro is not None else None
            pending.append((item, task))
            active += task is not None
            while pending and (pending[0][1] is None or pending[0][1].done()):
                await emit_head()
            while active >= window:
                await emit_head()
        while pending:
            await emit_head()
    except BaseException:
        left = [t for _, t in pending if t is not None]
        for task in left:
            if not task.done():
                task.cancel()
        # Await every task, finished ones included: a task that failed too (e.g. the same 401 on another record) is
        # then retrieved here, so asyncio prints no "Task exception was never retrieved" traceback at exit.
        await asyncio.gather(*left, return_exceptions=True)
        raise


def flow_window(*engines: Engine | None) -> int:
    """Records in flight: enough to keep every model and judge slot busy, few enough to bound memory."""
    return max([64] + [8 * e.concurrency for e in engines if e is not None])


AskFn = Callable[[ChatRequest], Awaitable[ChatResult]]


@dataclass
class ModelOutputs:
    """Outputs of the model under test: an earlier accepted output from the journal, else the model's answer."""

    journal: OutputJournal
    ask: AskFn

    async def output(self, record: Record) -> SanitizedOutput:
        """The record's output, asked of the model only when the journal holds no usable one."""
        request = self.journal.request(record)
        prev = self.journal.reusable(record, request)
        if prev is not None:
            return prev
        return self.journal.land(record, request, await self.ask(request))


@dataclass
class GivenOutputs:
    """Outputs that already exist (``evaluate``): looked up by record id."""

    outputs: dict[str, SanitizedOutput]

    async def output(self, record: Record) -> SanitizedOutput | None:
        """The saved output of the record, if any."""
        return self.outputs.get(record.id)


def run_sanitize(records: Iterable[Record], task: Any, engine: Engine, out_path: Any, *, instruction: str | None = None,
                 max_tokens: int | None = None, temperature: float | None = None,
                 overwrite: bool = False) -> list[SanitizedOutput]:
    """Run the model over ``records`` and write ``out_path`` (resumable); returns the outputs in record order."""
    journal = OutputJournal(task, engine, out_path, instruction=instruction, max_tokens=max_tokens,
                            temperature=temperature, overwrite=overwrite)
    outputs: list[SanitizedOutput] = []

    async def same(record: Record, out: SanitizedOutput | None) -> SanitizedOutput | None:
        return out

    def emit(record: Record, out: SanitizedOutput) -> None:
        journal.keep(out)
        outputs.append(out)

    try:
        stream_records(records, lambda ask: ModelOutputs(journal, ask), engine, {}, lambda asks: same, emit,
                       skip=lambda record: False, desc=task.task)
        journal.finish()
    finally:
        journal.close()
    return outputs


def stream_records(records: Iterable[Record], source: Any, model_engine: Engine | None, roles: Mapping[str, Engine],
                   start: Callable[[Mapping[str, AskFn]], Callable[[Record, SanitizedOutput | None], Awaitable[Any]]],
                   emit: Callable[[Record, Any], None], *, skip: Callable[[Record], bool], desc: str) -> None:
    """The record flow over ``records``: each one's output (``source``: the model's as it writes, or a saved one)
    goes to the scorer's per-record work, and each result is handed to ``emit`` in record order (None for a
    ``skip``ped record). ``start(asks)`` is called once every role stream is open (``asks``: role -> ask function)
    and returns that work. The model and the roles work at the same time on one event loop, each under its own
    concurrency limit."""

    async def go() -> None:
        async with AsyncExitStack() as stack:
            ask = None
            if model_engine is not None:
                ask = (await stack.enter_async_context(model_engine.stream(f"sanitize {desc}"))).ask
            asks = {role: (await stack.enter_async_context(engine.stream(f"{role} {desc}"))).ask
                    for role, engine in roles.items()}
            work, outputs = start(asks), source(ask)

            async def one(record: Record) -> Any:
                return await work(record, await outputs.output(record))

            await ordered_flow(records, lambda r: None if skip(r) else one(r), emit,
                               window=flow_window(model_engine, *roles.values()))

    engines: Sequence[Engine] = [e for e in (model_engine, *roles.values()) if e is not None]
    if engines:
        run_together(engines, go)
    else:
        run_sync(go)


def model_outputs(records: Sequence[Any], journal: OutputJournal, engine: Engine, desc: str) -> dict[str, SystemOutput]:
    """Every record's output from the model (earlier journal lines reused), journaled as each lands."""
    requests = [journal.request(r) for r in records]
    outputs: dict[str, SanitizedOutput] = {}
    todo: list[int] = []
    for i, (record, request) in enumerate(zip(records, requests)):
        earlier = journal.reusable(record, request)
        if earlier is not None:
            outputs[record.id] = earlier
        else:
            todo.append(i)

    def landed(j: int, result: Any) -> None:
        i = todo[j]
        outputs[records[i].id] = journal.land(records[i], requests[i], result)

    if todo:
        engine.run([requests[i] for i in todo], desc=desc, on_result=landed)
    for record in records:
        journal.keep(outputs[record.id])
    journal.finish()
    return {rid: SystemOutput(text=o.output, spans=o.spans, error=None if o.ok else (o.error or "failed"),
                              replacements=o.replacements) for rid, o in outputs.items()}
