"""The execution engine with a scripted in-memory adapter: retries, caching, fatal errors, pacing."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.executor import Engine, usage_by_role
from privasis_bench.engine.retry import FatalModelError, RetryPolicy
from privasis_bench.errors import PrivasisError

FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.01, jitter=0.0)


class ScriptedAdapter(Adapter):
    """Replies ``echo:<prompt>``; ``faults[prompt]`` is a list of exceptions raised on successive calls."""

    provider = "scripted"

    def __init__(self, faults: dict[str, list[BaseException]] | None = None, delay: float = 0.0) -> None:
        super().__init__("m")
        self.faults = {k: list(v) for k, v in (faults or {}).items()}
        self.delay = delay
        self.calls: Counter[str] = Counter()
        self.in_flight = self.max_in_flight = 0
        self.starts: list[float] = []
        self.closed = False

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        prompt = request.messages[-1][1]
        self.calls[prompt] += 1
        self.starts.append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            pending = self.faults.get(prompt)
            if pending:
                raise pending.pop(0)
            return ChatResult(text=f"echo:{prompt}", finish_reason="stop", usage=Usage(len(prompt), 2))
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        self.closed = True


class BatchAdapter(Adapter):
    provider = "batch"
    batched = True

    def __init__(self) -> None:
        super().__init__("m")
        self.batches: list[int] = []

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        self.batches.append(len(requests))
        return [ChatResult(text=r.messages[-1][1].upper(), usage=Usage(1, 1)) for r in requests]


def _reqs(*prompts: str) -> list[ChatRequest]:
    return [ChatRequest.user(p, max_tokens=16) for p in prompts]


def _engine(adapter: Adapter, cache: ResponseCache | None = None, **kw) -> Engine:
    kw.setdefault("retry", FAST)
    return Engine(adapter, ModelSpec.parse("scripted:m"), role=kw.pop("role", "model"), cache=cache, progress=False, **kw)


def test_results_in_order_and_on_result_called_once_each() -> None:
    adapter = ScriptedAdapter()
    seen: list[tuple[int, str]] = []
    with _engine(adapter, concurrency=3) as engine:
        results = engine.run(_reqs("a", "b", "c", "d"), desc="t", on_result=lambda i, r: seen.append((i, r.text)))
    assert [r.text for r in results] == ["echo:a", "echo:b", "echo:c", "echo:d"]
    assert sorted(seen) == [(0, "echo:a"), (1, "echo:b"), (2, "echo:c"), (3, "echo:d")]
    assert engine.stats.usage.prompt_tokens == 4 and engine.stats.usage.completion_tokens == 8
    assert adapter.closed


def test_transient_errors_are_retried_until_success() -> None:
    adapter = ScriptedAdapter({
        "a": [AdapterError("HTTP 429", retryable=True, status=429), AdapterError("HTTP 503", retryable=True, status=503)],
        "b": [ConnectionResetError("reset by peer")],  # unknown exceptions count as transient
    })
    engine = _engine(adapter)
    results = engine.run(_reqs("a", "b", "c"), desc="t")
    assert [r.text for r in results] == ["echo:a", "echo:b", "echo:c"]
    assert [r.attempts for r in results] == [3, 2, 1]
    assert engine.stats.retries == 3 and engine.stats.failed == 0 and engine.stats.batches == 6


def test_exhausted_retries_become_a_failure_with_the_last_error() -> None:
    adapter = ScriptedAdapter({"a": [AdapterError(f"HTTP 500 #{i}", retryable=True, status=500) for i in range(10)]})
    engine = _engine(adapter)
    (result,) = engine.run(_reqs("a"), desc="t")
    assert result.text is None and not result.ok
    assert "HTTP 500 #3" in result.error and "4 attempts" in result.error
    assert result.attempts == 4 and adapter.calls["a"] == 4 and engine.stats.failed == 1


def test_non_retryable_client_error_fails_only_that_request() -> None:
    adapter = ScriptedAdapter({"long": [AdapterError("HTTP 400: context length exceeded", retryable=False, status=400)]})
    engine = _engine(adapter)
    results = engine.run(_reqs("long", "short"), desc="t")
    assert results[0].text is None and "context length" in results[0].error and adapter.calls["long"] == 1
    assert results[1].text == "echo:short"


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_stop_the_run_with_a_scrubbed_message(status: int) -> None:
    secret = "sk-test-SECRET123"
    adapter = ScriptedAdapter({"a": [AdapterError(f"HTTP {status}: bad key {secret}", retryable=False, status=status)]})
    engine = Engine(adapter, ModelSpec.parse(f"scripted:m,api_key={secret}"), role="model", cache=None,
                    retry=FAST, concurrency=1, progress=False)
    with pytest.raises(FatalModelError) as info:
        engine.run(_reqs("a", "b", "c"), desc="t")
    assert isinstance(info.value, PrivasisError)
    message = str(info.value)
    assert str(status) in message and "scripted:m" in message and secret not in message
    assert sum(adapter.calls.values()) == 1  # stopped at once
    # The engine stays usable afterwards (its private loop survives the error).
    adapter.faults.clear()
    assert engine.run(_reqs("b"), desc="t")[0].text == "echo:b"


def test_retry_after_is_honoured() -> None:
    adapter = ScriptedAdapter({"a": [AdapterError("HTTP 429", retryable=True, status=429, retry_after=0.3)]})
    engine = _engine(adapter, retry=RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0))
    engine.run(_reqs("a"), desc="t")
    assert adapter.starts[1] - adapter.starts[0] >= 0.29


def test_retry_policy_delays() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.0, max_retry_after=10.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert policy.delay(1, retry_after=7) == 7 and policy.delay(1, retry_after=99) == 10.0
    jittered = RetryPolicy(base_delay=1.0, jitter=0.25)
    assert all(0.75 <= jittered.delay(1) <= 1.25 for _ in range(100))
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_cache_hits_cost_no_call_and_failures_are_not_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    first = ScriptedAdapter({"bad": [AdapterError("HTTP 400", retryable=False, status=400)]})
    r1 = _engine(first, cache).run(_reqs("a", "bad"), desc="t")
    assert r1[0].ok and not r1[0].cached and not r1[1].ok

    second = ScriptedAdapter()
    engine = _engine(second, cache)
    r2 = engine.run(_reqs("a", "bad"), desc="t")
    assert r2[0].cached and r2[0].text == "echo:a" and second.calls["a"] == 0
    assert r2[1].ok and second.calls["bad"] == 1  # the earlier failure was tried again
    assert engine.stats.cached == 1 and engine.stats.usage.prompt_tokens == len("bad")
    assert engine.stats.cached_usage.prompt_tokens == 1


def test_identical_requests_in_one_run_are_sent_once(tmp_path: Path) -> None:
    adapter = ScriptedAdapter(delay=0.01)
    engine = _engine(adapter, ResponseCache(tmp_path / "c.sqlite"), concurrency=4)
    results = engine.run(_reqs("x", "x", "y", "x"), desc="t")
    assert [r.text for r in results] == ["echo:x", "echo:x", "echo:y", "echo:x"]
    assert adapter.calls == Counter({"x": 1, "y": 1})
    assert engine.stats.cached == 2


def test_concurrency_limit_and_rpm_pacing() -> None:
    adapter = ScriptedAdapter(delay=0.05)
    _engine(adapter, concurrency=2).run(_reqs(*"abcdef"), desc="t")
    assert adapter.max_in_flight == 2

    paced = ScriptedAdapter()
    _engine(paced, concurrency=4, rpm=600).run(_reqs(*"abcd"), desc="t")  # one start every 0.1 s
    gaps = [b - a for a, b in zip(paced.starts, paced.starts[1:])]
    assert all(g >= 0.09 for g in gaps), gaps


def test_call_timeout_counts_as_transient() -> None:
    class Slow(ScriptedAdapter):
        async def agenerate(self, request: ChatRequest) -> ChatResult:
            if self.calls[request.messages[-1][1]] == 0:
                self.calls[request.messages[-1][1]] += 1
                await asyncio.sleep(5)
            return await super().agenerate(request)

    adapter = Slow()
    engine = _engine(adapter, call_timeout=0.1)
    start = time.monotonic()
    (result,) = engine.run(_reqs("a"), desc="t")
    assert result.text == "echo:a" and result.attempts == 2 and time.monotonic() - start < 2


def test_batched_adapter_runs_in_chunks(tmp_path: Path) -> None:
    adapter = BatchAdapter()
    cache = ResponseCache(tmp_path / "c.sqlite")
    landed: list[int] = []
    engine = _engine(adapter, cache, batch_size=3)
    results = engine.run(_reqs(*"abcdefg"), desc="t", on_result=lambda i, r: landed.append(i))
    assert [r.text for r in results] == list("ABCDEFG")
    assert adapter.batches == [3, 3, 1] and sorted(landed) == list(range(7))
    again = _engine(BatchAdapter(), cache, batch_size=3).run(_reqs(*"abcdefg"), desc="t")
    assert all(r.cached for r in again)


def test_run_is_reusable_and_works_inside_a_running_loop() -> None:
    engine = _engine(ScriptedAdapter())
    assert engine.run(_reqs("a"), desc="t")[0].text == "echo:a"
    assert engine.run(_reqs("b"), desc="t")[0].text == "echo:b"

    async def inside() -> str:
        return engine.run(_reqs("c"), desc="t")[0].text

    assert asyncio.run(inside()) == "echo:c"
    engine.close()
    engine.close()  # idempotent


def test_usage_by_role_sums_engines() -> None:
    model, judge1, judge2 = (_engine(ScriptedAdapter(), role=r) for r in ("model", "judge", "judge"))
    model.run(_reqs("aa"), desc="t")
    judge1.run(_reqs("b"), desc="t")
    judge2.run(_reqs("c", "d"), desc="t")
    usage = usage_by_role([model, judge1, judge2])
    assert usage["model"]["prompt_tokens"] == 2 and usage["model"]["requests"] == 1
    assert usage["judge"]["prompt_tokens"] == 3 and usage["judge"]["completion_tokens"] == 6
    assert usage["judge"]["total_tokens"] == 9 and usage["judge"]["batches"] == 3


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys) -> None:
    from privasis_bench.engine.progress import StageProgress

    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    plain = StageProgress("stage", 3, enabled=True)
    assert plain.bar is None  # CI logs get plain lines at an interval instead (tests/engine/test_progress_lines.py)
    plain.close()
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    assert StageProgress("stage", 3, enabled=False).bar is None
    bar = StageProgress("stage", 3, enabled=True)
    assert bar.bar is not None
    bar.done, bar.cached, bar.tokens = 1, 1, 42
    bar.refresh(advance=1)
    bar.close()
    assert "done=1, cached=1, failed=0, retries=0, tokens=42" in capsys.readouterr().err


def test_close_after_an_interrupted_run_cancels_leftover_calls() -> None:
    """Ctrl-C leaves arun's tasks pending on the private loop; close() must not let them run on."""
    adapter = ScriptedAdapter(delay=30)
    engine = _engine(adapter, concurrency=2)
    loop = engine._box().loop
    task = loop.create_task(engine.arun(_reqs("a", "b", "c"), desc="t"))
    loop.run_until_complete(asyncio.sleep(0.05))  # two calls in flight, then "interrupted"
    start = time.monotonic()
    engine.close()
    assert time.monotonic() - start < 5 and task.cancelled()
    assert sum(adapter.calls.values()) == 2 and adapter.closed


def test_a_batch_is_stored_and_handed_on_before_the_next_batch_starts(tmp_path: Path) -> None:
    """An in-process model runs batch after batch; an interrupt during one must never lose the one before it."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    landed: list[int] = []
    seen_at_start: list[tuple[list[int], bool]] = []

    class Sequential(BatchAdapter):
        sequential = True

        def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
            if requests[0].messages[-1][1] == "b":  # the second batch: the first must be saved by now
                seen_at_start.append((list(landed), cache.get(first.cache_key(engine.spec_key)) is not None))
            return super().generate_batch(requests)

    def persist(index: int, result: ChatResult) -> None:
        time.sleep(0.3)  # a slow write of the caller's own file: the next batch must wait for it
        landed.append(index)

    first, second = _reqs("a", "b")
    with _engine(Sequential(), cache=cache, concurrency=1) as engine:
        assert engine.batch_size == 1
        engine.run([first, second], desc="t", on_result=persist)
    assert seen_at_start == [([0], True)]


def test_ctrl_c_is_noticed_while_the_loop_waits_on_a_model_thread() -> None:
    """A Ctrl-C flagged while the loop sleeps in select (a model thread working) stops the run at once."""
    import _thread
    import signal
    import sys
    import threading

    release, started = threading.Event(), threading.Event()
    blocked_until_released: list[bool] = []

    class Threaded(Adapter):
        provider = "threaded"

        def __init__(self) -> None:
            super().__init__("m")

        async def agenerate(self, request: ChatRequest) -> ChatResult:
            def work() -> ChatResult:
                started.set()
                blocked_until_released.append(release.wait(10))
                return ChatResult(text="late", usage=Usage(1, 1))

            return await asyncio.to_thread(work)

    def main_thread_in_select() -> bool:
        frame = sys._current_frames().get(threading.main_thread().ident)
        return frame is not None and frame.f_code.co_name == "select" and frame.f_code.co_filename.endswith("selectors.py")

    def interrupt_once_idle() -> None:
        started.wait(10)
        while not main_thread_in_select():  # the loop has gone to sleep waiting for the thread
            time.sleep(0.001)
        _thread.interrupt_main()

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    engine = _engine(Threaded())
    threading.Thread(target=interrupt_once_idle, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            engine.run(_reqs("a"), desc="t")
        assert not blocked_until_released  # noticed while the model thread still worked
    finally:
        signal.signal(signal.SIGINT, previous)
        release.set()
        engine.close()


class CutThenFineBatchAdapter(Adapter):
    """In-process (batched) model whose first ``cuts`` answers to each prompt are cut at the token budget."""

    provider = "cutbatch"
    batched = True

    def __init__(self, cuts: int) -> None:
        super().__init__("m")
        self.cuts, self.seen, self.batches = cuts, {}, []

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        self.batches.append(len(requests))
        out = []
        for r in requests:
            prompt = r.messages[-1][1]
            n = self.seen[prompt] = self.seen.get(prompt, 0) + 1
            cut = n <= self.cuts and prompt != "never-cut"
            out.append(ChatResult(text="partial" if cut else f"full:{prompt}", finish_reason="length" if cut else "stop",
                                  usage=Usage(2, 3)))
        return out


@pytest.mark.parametrize("cuts, ok", [(2, True), (3, False)])
def test_in_process_adapters_ask_a_cut_answer_again_up_to_three_tries(cuts, ok) -> None:
    """Issue 34: one policy for every adapter: a batched (in-process) model gets the same 3 tries as an HTTP one."""
    adapter = CutThenFineBatchAdapter(cuts)
    with _engine(adapter, answers=AnswerPolicy()) as engine:
        results = engine.run(_reqs("a", "never-cut", "b"), desc="t")
    assert results[1].ok and results[1].text == "full:never-cut" and results[1].attempts == 1
    for r in (results[0], results[2]):
        if ok:
            assert r.ok and r.text.startswith("full:") and r.attempts == 3
            assert r.usage.completion_tokens == 9  # the two rejected tries are paid for and counted
        else:
            assert not r.ok and "cut at the token budget" in r.error
    assert adapter.batches[:2] == [3, 2]  # the retry batch holds only the rejected requests
    assert engine.stats.rejected_answers == (4 if ok else 6)


def test_accepted_cut_answers_are_not_asked_again_in_batches() -> None:
    adapter = CutThenFineBatchAdapter(5)
    with _engine(adapter, answers=AnswerPolicy(truncated="accept")) as engine:
        results = engine.run(_reqs("a", "b"), desc="t")
    assert [r.text for r in results] == ["partial", "partial"] and adapter.batches == [2]
