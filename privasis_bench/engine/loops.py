"""The event loop an engine (or several engines working together) runs on, and how it stops on Ctrl-C.

Adapters hold connections bound to the loop they first ran on, so engines that work together share one
:class:`LoopBox`. When an interrupt (Ctrl-C, SIGTERM) stops the loop, every engine on it is interrupted at once: an
in-process model ends its generation at its next token, and the work left on the loop is cancelled the first time
any of its engines closes. Nothing left over may resume while the command unwinds (closing one engine used to run
the others' leftover work to its end: minutes of generation, nothing of it saved).

The command's signal handler does not raise into a running loop: :func:`interrupt_running_loop` cancels the loop's
main task instead (as :class:`asyncio.Runner` does for Ctrl-C), so every ``finally`` and ``except`` on the way out
runs, and :meth:`LoopBox.run` raises ``KeyboardInterrupt`` once the task has unwound. An exception raised by a
signal handler lands wherever the main thread happens to be: inside a library's bookkeeping, or inside a ``__del__``
method, where Python only prints it and goes on (the interrupt is then lost and the run carries on).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
WAKE_SECONDS = 0.2  # how often a running loop wakes (so Ctrl-C is noticed while a model thread works)

#: The LoopBox whose loop the main thread is running now (the one a signal handler interrupts), if any.
_MAIN: list["LoopBox"] = []


def interrupt_running_loop() -> bool:
    """For a signal handler: stop the loop the main thread is running by cancelling its main task (True), or say
    that no loop is running there, or that this loop was already asked once, so the caller raises (False)."""
    if not _MAIN:
        return False
    box = _MAIN[-1]
    task = box.main_task
    if box.signalled or task is None or task.done():
        return False
    box.signalled = True
    box.interrupt()
    task.cancel()
    box.loop.call_soon_threadsafe(lambda: None)  # wake the loop at once (it may be waiting in select)
    return True


class LoopBox:
    """An event loop, the engines on it, and whether an interrupt stopped it (the last engine closes the loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, engine: Any) -> None:
        self.loop, self.users, self.engines, self.interrupted = loop, 1, [engine], False
        self.main_task: asyncio.Task[Any] | None = None  # what run() is running now
        self.signalled = False  # run()'s main task was cancelled by interrupt_running_loop

    def join(self, engine: Any) -> None:
        """Another engine runs on this loop from now on."""
        self.users += 1
        self.engines.append(engine)

    def interrupt(self) -> None:
        """Stop every engine's in-process work now (its current generation ends at its next token)."""
        self.interrupted = True
        for engine in list(self.engines):
            try:
                engine.adapter.interrupt()
            except Exception:  # noqa: BLE001 - an adapter that cannot stop is left to finish; the rest still stop
                pass

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make()`` to its end; an interrupt first interrupts every engine on the loop, then propagates as
        ``KeyboardInterrupt`` (also when the work finished before the cancellation reached it)."""
        loop = self.loop
        beat: asyncio.TimerHandle | None = None

        def wake() -> None:  # Python runs a signal handler only when the main thread runs Python code
            nonlocal beat
            beat = loop.call_later(WAKE_SECONDS, wake)

        async def main() -> T:
            return await make()

        wake()
        on_main = threading.current_thread() is threading.main_thread()
        self.signalled = False
        task = self.main_task = loop.create_task(main())
        if on_main:
            _MAIN.append(self)
        try:
            result = loop.run_until_complete(task)
        except asyncio.CancelledError:
            if self.signalled:  # cancelled by interrupt_running_loop: the interrupt goes on up
                raise KeyboardInterrupt from None
            raise
        except (KeyboardInterrupt, SystemExit):  # raised in the loop (a second Ctrl-C, or work that raises it)
            self.interrupt()
            raise
        finally:
            self.main_task = None
            if on_main:
                _MAIN.remove(self)
            if beat is not None:
                beat.cancel()
        if self.signalled:  # the work ended before the cancellation reached it: the interrupt still goes on up
            raise KeyboardInterrupt
        return result

    def close_for(self, engine: Any) -> None:
        """``engine`` is done: release its adapter; after an interrupt, first cancel all work left on the loop; the
        last engine also closes the loop."""
        loop = self.loop
        self.users -= 1
        if engine in self.engines:
            self.engines.remove(engine)
        if self.users > 0 and not self.interrupted:  # another engine still runs on this loop: release only this one
            loop.run_until_complete(engine.adapter.aclose())
            return
        try:
            leftovers = [t for t in asyncio.all_tasks(loop) if not t.done()]
            if leftovers:  # work left by an interrupted run must not resume while we close
                engine.adapter.interrupt()
                for task in leftovers:
                    task.cancel()
                try:
                    loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
                except BaseException:  # noqa: BLE001 - the interrupt that stopped them is already propagating
                    pass
            loop.run_until_complete(engine.adapter.aclose())
            if self.users <= 0 and not self.interrupted:  # after an interrupt, closing the loop waits for no thread
                loop.run_until_complete(loop.shutdown_default_executor())  # (see privasis_bench.__main__)
        finally:
            if self.users <= 0:
                loop.close()
