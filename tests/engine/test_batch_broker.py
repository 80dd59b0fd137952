"""The batch broker on its own, with an in-memory provider: byte limits split batches, a submit whose reply was lost
is found again by its tag (not paid twice), rows are written before submitting and removed only after the answers
are stored, a 401 while polling keeps the batch for a later run, and identical requests share one answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from privasis_bench.adapters.base import AdapterError, ChatRequest, ChatResult
from privasis_bench.adapters.batch_api import BatchState
from privasis_bench.engine.batch_broker import BatchBroker, BatchOptions
from privasis_bench.engine.batch_store import BatchStore
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.retry import RetryPolicy


class MemoryProvider:
    """Batches answered at the first poll; ``lose_reply``: the first submit creates the batch, then fails."""

    max_requests = 100
    max_bytes = 10_000

    def __init__(self, store: BatchStore, *, lose_reply: bool = False, fatal_poll: bool = False,
                 gone: int = 0, refuse_over: int | None = None, refuse_status: int = 413) -> None:
        self.store, self.lose_reply, self.fatal_poll, self.gone = store, lose_reply, fatal_poll, gone
        self.refuse_over = refuse_over  # a batch of more requests is refused with HTTP 413 (nothing created)
        self.refused: list[int] = []
        self.refuse_status = refuse_status
        self.finds = 0
        self.batches: dict[str, tuple[str, list[dict]]] = {}
        self.paid = 0
        self.rows_at_submit: list[int] = []

    def check(self) -> None:
        pass

    def line(self, custom_id: str, request: ChatRequest) -> dict:
        return {"custom_id": custom_id, "prompt": request.messages[-1][1]}

    def submit(self, lines: list[dict], tag: str) -> str:
        self.rows_at_submit.append(len(self.store.rows("spec", "judge")))
        if self.refuse_over is not None and len(lines) > self.refuse_over:
            self.refused.append(len(lines))
            raise AdapterError("refused", retryable=self.refuse_status == 429, status=self.refuse_status)
        batch_id = f"b{len(self.batches)}"
        self.batches[batch_id] = (tag, lines)
        self.paid += len(lines)
        if self.lose_reply:
            self.lose_reply = False
            raise AdapterError("connection reset", retryable=True)
        return batch_id

    def find(self, tag: str, known: frozenset[str] = frozenset()) -> str | None:
        self.finds += 1
        return next((b for b, (t, _) in self.batches.items() if t == tag), None)

    def poll(self, batch_id: str) -> BatchState:
        if self.fatal_poll:
            raise AdapterError("bad key", retryable=False, status=401)
        if self.gone:
            self.gone -= 1
            raise AdapterError("no such batch", retryable=False, status=404)
        return BatchState("completed", True, len(self.batches[batch_id][1]), len(self.batches[batch_id][1]))

    def results(self, batch_id: str) -> dict:
        return {x["custom_id"]: ChatResult(text=x["prompt"].upper()) for x in self.batches[batch_id][1]}


def _broker(tmp_path: Path, sent: list[int] | None = None,
            **kw) -> tuple[BatchBroker, MemoryProvider, ResponseCache, BatchStore]:
    cache = ResponseCache(tmp_path / "r.sqlite")
    store = BatchStore(cache.path)
    provider = MemoryProvider(store, **kw)
    broker = BatchBroker(provider, store, spec_key="spec", role="judge", label="x:y",
                         options=BatchOptions(roles=frozenset({"judge"}), size=50, quiet=0.05, poll=0.01),
                         keep=lambda k, r: cache.put(k, "spec", r), on_sent=None if sent is None else sent.append)
    return broker, provider, cache, store


def _ask_all(broker: BatchBroker, prompts: list[str]) -> list:
    async def go():
        return await asyncio.gather(*(broker.ask(ChatRequest.user(p, max_tokens=8)) for p in prompts),
                                    return_exceptions=True)
    return asyncio.run(go())


def test_byte_limit_splits_and_rows_come_before_submit_and_go_after_storing(tmp_path: Path) -> None:
    broker, provider, cache, store = _broker(tmp_path)
    prompts = [f"{i:03d} " + "x" * 3000 for i in range(7)]  # ~3 KB lines, 10 KB a batch: 3 per batch
    results = _ask_all(broker, prompts)
    assert [r.text for r in results] == [p.upper() for p in prompts]
    assert sorted(len(lines) for _, lines in provider.batches.values()) == [1, 3, 3]
    assert all(n >= 1 for n in provider.rows_at_submit)  # the row existed before the provider heard of the batch
    assert store.rows("spec", "judge") == [] and len(cache) == 7 and provider.paid == 7


def test_a_lost_submit_reply_is_found_by_its_tag_not_paid_again(tmp_path: Path) -> None:
    broker, provider, cache, store = _broker(tmp_path, lose_reply=True)
    results = _ask_all(broker, ["a", "b"])
    assert [r.text for r in results] == ["A", "B"] and provider.paid == 2 and len(provider.batches) == 1


def test_identical_requests_share_one_answer(tmp_path: Path) -> None:
    broker, provider, cache, store = _broker(tmp_path)
    results = _ask_all(broker, ["same", "same", "other"])
    assert [r.text for r in results] == ["SAME", "SAME", "OTHER"] and provider.paid == 2


def test_a_401_while_polling_stops_and_keeps_the_batch_for_a_later_run(tmp_path: Path) -> None:
    broker, provider, cache, store = _broker(tmp_path, fatal_poll=True)
    results = _ask_all(broker, ["a"])
    assert isinstance(results[0], AdapterError) and results[0].status == 401
    rows = store.rows("spec", "judge")
    assert len(rows) == 1 and rows[0].provider_id == "b0" and rows[0].keys == [
        ChatRequest.user("a", max_tokens=8).cache_key("spec")]
    # a later run with a working key collects it instead of submitting again
    provider.fatal_poll = False
    later = BatchBroker(provider, store, spec_key="spec", role="judge", label="x:y",
                        options=BatchOptions(roles=frozenset({"judge"}), quiet=0.05, poll=0.01),
                        keep=lambda k, r: cache.put(k, "spec", r))
    assert [r.text for r in _ask_all(later, ["a"])] == ["A"] and provider.paid == 1 and later.counts.recovered == 1


def test_options_are_checked() -> None:
    with pytest.raises(ValueError):
        BatchOptions(size=0)


def test_a_batch_the_provider_no_longer_knows_is_forgotten_and_its_requests_asked_anew(tmp_path: Path) -> None:
    broker, provider, cache, store = _broker(tmp_path, gone=1)
    request = ChatRequest.user("a", max_tokens=8)

    async def go():
        with pytest.raises(AdapterError, match="is gone") as gone:
            await broker.ask(request)
        assert gone.value.retryable and store.rows("spec", "judge") == []
        return await broker.ask(request)  # the engine's retry: sent in a new batch

    assert asyncio.run(go()).text == "A" and len(provider.batches) == 2


def test_a_batch_refused_for_its_size_is_halved_down_to_single_requests_without_a_look_up(tmp_path: Path) -> None:
    sent: list[int] = []
    broker, provider, cache, store = _broker(tmp_path, sent, refuse_over=1)
    results = _ask_all(broker, ["a", "b", "c"])
    assert [r.text for r in results] == ["A", "B", "C"]
    assert provider.refused == [3, 2] and sorted(len(x) for _, x in provider.batches.values()) == [1, 1, 1]
    assert provider.finds == 0  # the provider answered the refusal: no batch can exist, nothing to look up
    assert sum(sent) == 3 and store.rows("spec", "judge") == []


def test_requests_are_counted_once_when_their_batch_is_accepted_and_not_again_when_collected(tmp_path: Path) -> None:
    sent: list[int] = []
    broker, provider, cache, store = _broker(tmp_path, sent)
    results = _ask_all(broker, ["a", "b", "a"])
    assert [r.text for r in results] == ["A", "B", "A"] and sent == [2]
    # an earlier run's batches: one whose id it wrote down (it counted it), one it died before learning (not counted)
    counted = provider.submit([{"custom_id": "r0", "prompt": "c"}], "t-counted")
    provider.submit([{"custom_id": "r0", "prompt": "d"}, {"custom_id": "r1", "prompt": "e"}], "t-lost")
    keys = {p: ChatRequest.user(p, max_tokens=8).cache_key("spec") for p in "cde"}
    store.add("t-counted", "spec", "judge", [keys["c"]])
    store.set_provider_id("t-counted", counted)
    store.add("t-lost", "spec", "judge", [keys["d"], keys["e"]])
    later_sent: list[int] = []
    later = BatchBroker(provider, store, spec_key="spec", role="judge", label="x:y",
                        options=BatchOptions(roles=frozenset({"judge"}), quiet=0.05, poll=0.01),
                        keep=lambda k, r: cache.put(k, "spec", r), on_sent=later_sent.append)
    assert [r.text for r in _ask_all(later, ["c", "d", "e"])] == ["C", "D", "E"]
    assert later.counts.recovered == 2 and later_sent == [2] and provider.paid == 2 + 3


def test_a_batch_refused_by_a_rate_limit_is_sent_again_whole_once_then_halved(tmp_path: Path) -> None:
    broker, provider, cache, store = _broker(tmp_path, refuse_over=2, refuse_status=429)
    broker.retry = RetryPolicy(base_delay=0.01)
    results = _ask_all(broker, ["a", "b", "c", "d"])
    assert [r.text for r in results] == ["A", "B", "C", "D"]
    assert provider.refused == [4, 4] and sorted(len(x) for _, x in provider.batches.values()) == [2, 2]
