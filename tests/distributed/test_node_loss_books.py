"""Unit tests of what a lost node leaves behind: the shard's books of unreported spend, the node watch, the options.

No Ray here: a shard is a SQLite file, and the watch reads a node table given to it (a fake of ``ray.nodes()``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from privasis_bench.adapters.base import ChatResult, Usage
from privasis_bench.distributed import nodes as node_watch
from privasis_bench.distributed.cluster import RayOptions, check_resources, parse_resources
from privasis_bench.distributed.nodes import NodesLostError, NodeWatch, pump
from privasis_bench.distributed.shards import ShardCache, merge_shards, unreported_spend
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.errors import PrivasisError


def _answer(text: str, prompt: int, completion: int) -> ChatResult:
    return ChatResult(text=text, finish_reason="stop", usage=Usage(prompt, completion))


def test_a_dead_attempts_calls_are_inherited_once_by_the_next_attempt(tmp_path: Path):
    path = tmp_path / "shards" / "batch.sqlite"
    dead = ShardCache(path, None, role="judge")
    dead.sent("call-1")
    dead.put("k1", "spec", _answer("one", 10, 5))
    dead.returned("call-1")
    dead.sent("call-2")  # out when the worker died: never returned, never answered
    # the worker dies here: its shard is never closed
    again = ShardCache(path, None, role="judge")
    assert again.inherited.batches == 2  # one answered, one in flight
    assert (again.inherited.usage.prompt_tokens, again.inherited.usage.completion_tokens) == (10, 5)
    assert again.get("k1") is not None and again.get("k1").cached  # the answer is not paid for again
    again.close()  # its batch reached the driver: the books are settled
    assert ShardCache(path, None, role="judge").inherited.batches == 0


def test_an_attempt_dying_after_inheriting_passes_everything_on(tmp_path: Path):
    path = tmp_path / "batch.sqlite"
    first = ShardCache(path, None)
    first.sent("a")
    second = ShardCache(path, None)  # first died
    second.put("k", "spec", _answer("x", 3, 4))  # second dies too
    third = ShardCache(path, None)
    assert third.inherited.batches == 2 and third.inherited.usage.total_tokens == 7


def test_the_driver_counts_what_shards_of_a_stopped_run_hold_per_role_before_merging(tmp_path: Path):
    directory = tmp_path / "shards"
    model = ShardCache(directory / "sanitize-b1.sqlite", None, role="model")
    model.put("m1", "spec", _answer("out", 20, 8))
    judge = ShardCache(directory / "judge-b1.sqlite", None, role="judge")
    judge.sent("j-call")
    finished = ShardCache(directory / "judge-b0.sqlite", None, role="judge")
    finished.put("j0", "spec", _answer("ok", 1, 1))
    finished.close()  # reported with its batch: not counted again
    spent = unreported_spend(directory)
    assert spent["model"].batches == 1 and spent["model"].usage.total_tokens == 28
    assert spent["judge"].batches == 1 and spent["judge"].usage.total_tokens == 0
    for shard in (model, judge):
        shard.close()
    main = ResponseCache(tmp_path / "main.sqlite")
    assert merge_shards(main, directory) == 2 and main.get("j0") is not None
    assert unreported_spend(directory) == {}


@pytest.mark.parametrize("text, pairs", [("pb_worker=1", (("pb_worker", 1.0),)),
                                         (" a=0.5, b=2 ,", (("a", 0.5), ("b", 2.0))), ("", ()), (None, ())])
def test_ray_resources_parse(text, pairs):
    assert parse_resources(text) == pairs


@pytest.mark.parametrize("text", ["pb_worker", "pb_worker=0", "pb_worker=x", "=1", "CPU=1", "GPU=1"])
def test_bad_ray_resources_are_one_line_naming_the_option(text):
    with pytest.raises(PrivasisError) as err:
        parse_resources(text)
    assert str(err.value).startswith("--ray-resources:") and "\n" not in str(err.value)


class FakeRay:
    """``ray.nodes()`` / ``ray.cluster_resources()`` over a node table the test edits."""

    def __init__(self, table: list[dict]) -> None:
        self.table = table

    def nodes(self) -> list[dict]:
        return [dict(n) for n in self.table]

    def cluster_resources(self) -> dict[str, float]:
        total: dict[str, float] = {}
        for node in self.table:
            if node["Alive"]:
                for key, value in node["Resources"].items():
                    total[key] = total.get(key, 0.0) + value
        return total


def _node(node_id: str, **resources: float) -> dict:
    return {"NodeID": node_id, "Alive": True, "Resources": resources}


def test_asking_for_a_resource_no_node_offers_is_one_line():
    ray = FakeRay([_node("h" * 56, CPU=1), _node("w" * 56, CPU=2, pb_worker=4)])
    check_resources(ray, RayOptions(resources=(("pb_worker", 1.0),)))
    with pytest.raises(PrivasisError, match="no node of the cluster offers 1 of 'gpu_box'.*offered: pb_worker"):
        check_resources(ray, RayOptions(resources=(("gpu_box", 1.0),)))


def _never_ending() -> Iterator[int]:
    """A Ray result stream whose next batch never comes (every node that could run it is gone)."""
    yield 0
    threading.Event().wait()


def test_a_lost_node_is_told_and_the_run_stops_once_no_node_can_host_the_stages(monkeypatch, capsys):
    monkeypatch.setattr(node_watch, "POLL_S", 0.02)
    table = [_node("h" * 56, CPU=1), _node("a" * 56, CPU=2, pb_worker=4), _node("b" * 56, CPU=2, pb_worker=4)]
    ray = FakeRay(table)
    got = []
    with pytest.raises(NodesLostError) as err:
        with NodeWatch(ray, {"pb_worker": 1.0}, 0.5, wait_s=0.1) as watch:
            rows = pump(_never_ending(), watch, step_s=0.02)
            got.append(next(rows))
            table[1]["Alive"] = False  # one of two worker nodes lost: the other hosts the stages
            while not capsys.readouterr().err.count("lost"):
                time.sleep(0.02)
            assert watch.reason is None and not watch.stopped.is_set()
            table[2]["Alive"] = False  # the last node offering pb_worker
            next(rows)  # blocks until the watch stops the run: raised in this thread, no signal
    assert got == [0]
    message = str(err.value)
    assert err.value.exit_code == 1 and "\n" not in message
    assert "no live node can host the stages (0.5 CPU, 1 pb_worker per actor)" in message
    assert "bbbbbbbbbbbb" in message and "re-run the same command" in message


def test_the_pump_hands_on_items_and_errors_in_order_and_stops_its_reader_when_closed():
    assert list(pump(iter(range(5)), None, step_s=0.01)) == [0, 1, 2, 3, 4]

    def failing() -> Iterator[int]:
        yield 1
        raise ValueError("stage broke")

    rows = pump(failing(), None, step_s=0.01)
    assert next(rows) == 1
    with pytest.raises(ValueError, match="stage broke"):
        next(rows)
    closed = threading.Event()

    def endless() -> Iterator[int]:
        try:
            n = 0
            while True:
                n += 1
                yield n
        finally:
            closed.set()

    rows = pump(endless(), None, step_s=0.01)
    assert next(rows) == 1
    rows.close()
    assert closed.wait(5)  # the reader thread closed the source once the caller stopped


def test_a_batch_going_on_to_another_stage_keeps_its_books_until_the_driver_settles_them(tmp_path: Path):
    from privasis_bench.distributed.shards import settle

    shard = ShardCache(tmp_path / "sanitize-b1.sqlite", None, settle_on_close=False)
    shard.put("k", "spec", _answer("x", 2, 2))
    shard.close()  # the batch went on to the judge stage, its counts with it, and was lost there
    assert unreported_spend(tmp_path)["model"].batches == 1
    settle(tmp_path, ["sanitize-b1", "judge-b1"])  # the batch landed: the driver counted it
    assert unreported_spend(tmp_path) == {}
