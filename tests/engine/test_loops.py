"""An interrupt stops every engine on a shared event loop at once (issue 51, item 6): each adapter is told to stop
(an in-process model ends its generation at its next token), and closing the first engine cancels the work left on
the loop instead of running it on while the command unwinds. The command's signal handler cancels the running work
rather than raising into it, so no interrupt is lost where Python ignores exceptions."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.cli import interrupt_signal
from privasis_bench.engine.executor import Engine, run_together
from privasis_bench.engine.stats import PAID


class Endless(Adapter):
    """Answers after a number of loop turns; counts turns and interrupts."""

    cacheable = False

    def __init__(self, turns: int = 10_000) -> None:
        super().__init__("m")
        self.turns, self.ran, self.interrupts, self.closed = turns, 0, 0, False

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        for _ in range(self.turns):
            self.ran += 1
            await asyncio.sleep(0)
        return ChatResult(text="done")

    def interrupt(self) -> None:
        self.interrupts += 1

    async def aclose(self) -> None:
        self.closed = True


def _engine(adapter: Adapter, role: str) -> Engine:
    return Engine(adapter, ModelSpec.parse("scripted:m"), role=role, cache=None, progress=False)


def test_an_interrupt_stops_every_engine_and_no_leftover_work_runs_on_while_closing() -> None:
    model, judge = Endless(), Endless()
    a, b = _engine(model, "model"), _engine(judge, "judge")

    async def work() -> None:
        asyncio.ensure_future(b.arun([ChatRequest.user("judge me", max_tokens=8)], desc="judge"))  # the other engine's work
        await asyncio.sleep(0)
        while judge.ran < 5:
            await asyncio.sleep(0)
        raise KeyboardInterrupt  # what Ctrl-C raises in the main thread

    with pytest.raises(KeyboardInterrupt):
        run_together([a, b], work)
    assert model.interrupts >= 1 and judge.interrupts >= 1  # both told to stop at the interrupt
    ran = judge.ran
    a.close()  # the first engine to close cancels the judge's leftover work instead of running it to its end
    assert judge.ran <= ran + 1 and model.closed
    b.close()
    assert judge.closed and judge.ran < judge.turns


def test_a_normal_close_of_one_engine_leaves_the_other_running() -> None:
    model, judge = Endless(turns=3), Endless(turns=3)
    a, b = _engine(model, "model"), _engine(judge, "judge")

    async def work() -> list:
        return await asyncio.gather(a.arun([ChatRequest.user("x", max_tokens=8)], desc="m"), b.arun([ChatRequest.user("y", max_tokens=8)], desc="j"))

    results = run_together([a, b], work)
    assert [r[0].text for r in results] == ["done", "done"]
    a.close()
    assert model.closed and not judge.closed and model.interrupts == 0
    assert b.run([ChatRequest.user("z", max_tokens=8)], desc="j")[0].text == "done"  # the loop still serves the other engine
    b.close()


class _SignalsInDel:
    """An object whose finalizer receives SIGTERM: the handler then runs inside ``__del__``, where Python prints an
    exception it raises and carries on (a signal arriving while a library finalizes something)."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGTERM)
        for _ in range(1000):  # Python code, so the handler runs here, inside __del__
            pass


@pytest.fixture
def cli_signal_handler():
    """The command line's SIGTERM handler, installed for the test and removed after it."""
    previous = signal.signal(signal.SIGTERM, interrupt_signal)
    yield
    signal.signal(signal.SIGTERM, previous)
    PAID.resume_counting()


def test_a_signal_received_inside_a_finalizer_still_interrupts_the_run(cli_signal_handler) -> None:
    unwound: list[str] = []

    async def work() -> str:
        try:
            _SignalsInDel()  # dropped at once: its __del__ runs here
            for _ in range(200):  # two seconds of work, which the interrupt must cut short
                await asyncio.sleep(0.01)
            return "finished"
        finally:
            unwound.append("finally ran")

    engine = _engine(Endless(turns=1), "model")
    with pytest.raises(KeyboardInterrupt):  # a handler raising KeyboardInterrupt here would be ignored by Python
        run_together([engine], work)
    assert unwound == ["finally ran"]
    engine.close()


def test_a_second_signal_stops_work_that_ignores_the_first(cli_signal_handler) -> None:
    async def stubborn() -> str:
        for signal_now in (True, True, False, False):  # two signals, then ten seconds only a forced stop cuts short
            try:
                if signal_now:
                    signal.raise_signal(signal.SIGTERM)
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                pass  # work that swallows every cancellation
        return "never"

    engine = _engine(Endless(turns=1), "model")
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_together([engine], stubborn)
    assert time.monotonic() - started < 4  # the second signal stopped it: no five-second sleep ran out
    engine.close()
