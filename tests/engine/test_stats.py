"""EngineStats.absorb: what a worker's engine counted is added, counter by counter, to the driver's engine."""

from __future__ import annotations

from privasis_bench.adapters.base import Usage
from privasis_bench.engine.stats import COUNTERS, EngineStats, usage_by_role


def test_absorb_adds_every_counter_and_both_usages():
    mine = EngineStats(done=2, batches=2, cached=1, usage=Usage(10, 5), cached_usage=Usage(3, 1))
    worker = EngineStats(done=3, batches=4, retries=1, failed=1, timeouts=1, usage=Usage(20, 7), cached_usage=Usage(0, 0))
    before = {name: getattr(mine, name) + getattr(worker, name) for name in COUNTERS}
    mine.absorb(worker)
    assert {name: getattr(mine, name) for name in COUNTERS} == before
    assert mine.done == 5
    assert (mine.usage.prompt_tokens, mine.usage.completion_tokens) == (30, 12)
    assert (mine.cached_usage.prompt_tokens, mine.cached_usage.completion_tokens) == (3, 1)
    assert worker.batches == 4  # the worker's own stats are left as they were


def test_absorbed_stats_show_in_usage_by_role():
    class _Engine:
        role = "judge"

        def __init__(self) -> None:
            self.stats = EngineStats()

    engine = _Engine()
    engine.stats.absorb(EngineStats(batches=3, usage=Usage(9, 4)))
    row = usage_by_role([engine])["judge"]
    assert (row["batches"], row["prompt_tokens"], row["completion_tokens"], row["total_tokens"]) == (3, 9, 4, 13)


def test_settle_waits_until_every_running_ledger_saver_has_saved_past_its_mark() -> None:
    import threading

    from privasis_bench.engine.stats import StatsChanges

    changes = StatsChanges()
    assert changes.settle(timeout=0.01)  # no saver running: nothing to wait for
    changes.saving("ledger", changes.count)
    assert not changes.settle(timeout=0.05)  # a saver that never saves again is not waited for forever
    saved: list[int] = []
    before = changes.count

    def saver() -> None:
        seen = changes.wait(before, 5.0)  # woken by settle's mark
        saved.append(seen)
        changes.saving("ledger", seen)

    thread = threading.Thread(target=saver)
    thread.start()
    assert changes.settle(timeout=5.0) and saved == [changes.count]
    thread.join()
    changes.saving("ledger", None)  # stopped: settle no longer waits for it
    assert changes.settle(timeout=0.01)
