"""In-process llama.cpp (xllamacpp): a request waiting for a slot gives up as soon as the run is interrupted, instead
of queueing inside llama.cpp's server where it could be cancelled only once it streams (issue 51, item 6). The
server is a scripted stand-in that holds its one request until released."""

from __future__ import annotations

import threading

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.llamacpp_xll import XllamaEngine, XllamaSettings


class HeldServer:
    """Streams one chunk, then holds the call until ``release`` (or until the callback asks to cancel)."""

    def __init__(self) -> None:
        self.release, self.started, self.calls = threading.Event(), threading.Event(), 0

    def handle_chat_completions(self, body: dict, on_chunk) -> dict:  # noqa: ANN001
        self.calls += 1
        self.started.set()
        while not self.release.wait(0.01):
            if on_chunk({"choices": [{"delta": {"content": "x"}}]}):
                return {}
        on_chunk({"choices": [{"delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1,
                                                                              "completion_tokens": 1}})
        return {}


def _engine(server: HeldServer, slots: int = 1) -> XllamaEngine:
    engine = XllamaEngine.__new__(XllamaEngine)  # the real class, with the scripted server instead of a model
    engine.settings = XllamaSettings(path="m.gguf", n_ctx=512, n_threads=1, n_parallel=slots, chat_template=None,
                                     extra_bufts=False, verbose=False)
    engine.server, engine._stop, engine._slots = server, threading.Event(), threading.BoundedSemaphore(slots)
    return engine


def test_requests_waiting_for_the_slot_give_up_on_an_interrupt() -> None:
    server = HeldServer()
    engine = _engine(server)
    results: list = [None] * 4

    def ask(i: int) -> None:
        results[i] = engine.generate(ChatRequest.user(f"q{i}", max_tokens=8), 0, {})

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    assert server.started.wait(30)
    engine.interrupt()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)  # nobody waited for the held request to finish
    assert server.calls == 1  # only one request ever reached the server (one slot)
    assert all(r is not None and not r.ok and "interrupted" in r.error for r in results)


def test_without_an_interrupt_every_request_is_answered_one_slot_at_a_time() -> None:
    server = HeldServer()
    server.release.set()
    engine = _engine(server)
    answers = [engine.generate(ChatRequest.user(f"q{i}", max_tokens=8), 0, {}) for i in range(3)]
    assert all(a.ok and a.text == "" for a in answers)
    assert server.calls == 3
