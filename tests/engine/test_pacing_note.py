"""A pacing wait (``--rpm``) long enough to look like a hang is told in one line: what waits, how long, why."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from privasis_bench.engine import calls
from privasis_bench.engine.calls import Pacer


def test_a_long_pacing_wait_is_told_and_a_short_one_is_not(monkeypatch) -> None:
    monkeypatch.setattr(calls, "PACING_NOTE_S", 0.1)
    notes: list[str] = []
    engine = SimpleNamespace(next_slot=0.0)

    async def three_starts(interval: float) -> None:
        pacer = Pacer(engine, interval, notes.append, "model")  # type: ignore[arg-type]
        for _ in range(3):
            await pacer.wait()

    asyncio.run(three_starts(0.02))
    assert notes == []
    engine.next_slot = 0.0
    asyncio.run(three_starts(0.15))
    assert len(notes) == 2 and all(n.startswith("[model] pacing: the next request starts in") for n in notes), notes
    assert "at most 400 requests per minute" in notes[0]
