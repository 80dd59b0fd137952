"""The record flow: items are processed concurrently within a window and handed on in input order."""

from __future__ import annotations

import asyncio
import random

import pytest

from privasis_bench.pipeline.flow import ordered_flow


def _run(coro):
    return asyncio.run(coro)


def test_items_are_emitted_in_input_order_whatever_order_they_finish_in() -> None:
    rng = random.Random(3)
    delays = [rng.random() / 100 for _ in range(40)]
    finished: list[int] = []
    emitted: list[tuple[int, int | None]] = []

    async def work(i: int) -> int:
        await asyncio.sleep(delays[i])
        finished.append(i)
        return i * 10

    _run(ordered_flow(range(40), lambda i: None if i % 7 == 0 else work(i), lambda i, r: emitted.append((i, r)), window=8))
    assert [i for i, _ in emitted] == list(range(40))
    assert all(r == (None if i % 7 == 0 else i * 10) for i, r in emitted)
    assert finished != sorted(finished)  # they really ran out of order


def test_the_window_bounds_work_in_flight_and_is_filled() -> None:
    running, peak = 0, 0

    async def work(i: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.002)
        running -= 1
        return i

    _run(ordered_flow(range(50), work, lambda i, r: None, window=5))
    assert peak == 5


def test_emission_does_not_wait_for_the_whole_input() -> None:
    """The first item is handed on while later ones are still running (records stream through)."""
    log: list[str] = []

    async def work(i: int) -> int:
        await asyncio.sleep(0.001 if i == 0 else 0.05)
        log.append(f"done {i}")
        return i

    _run(ordered_flow(range(4), work, lambda i, r: log.append(f"emit {i}"), window=4))
    assert log.index("emit 0") < log.index("done 1")


def test_a_failure_cancels_the_work_in_flight_and_propagates() -> None:
    cancelled: list[int] = []
    emitted: list[int] = []

    async def work(i: int) -> int:
        if i == 2:
            await asyncio.sleep(0.01)
            raise RuntimeError("boom")
        try:
            await asyncio.sleep(0.001 if i < 2 else 5)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise
        return i

    with pytest.raises(RuntimeError, match="boom"):
        _run(ordered_flow(range(6), work, lambda i, r: emitted.append(i), window=6))
    assert emitted == [0, 1] and sorted(cancelled) == [3, 4, 5]


def test_window_must_be_positive() -> None:
    with pytest.raises(ValueError):
        _run(ordered_flow([1], lambda i: None, lambda i, r: None, window=0))
