"""The ``xllamacpp`` back-end of ``llamacpp:``: llama.cpp's own server engine, in process, from a prebuilt wheel.

``xllamacpp`` ships manylinux CPU wheels, so installing it compiles nothing. Its ``Server`` runs llama.cpp's
server loop in C++ threads (parallel slots, continuous batching, prompt cache) and answers OpenAI-style chat
requests given as Python dicts; a call releases the GIL, so several worker threads can keep several slots busy.

Each request is streamed so that :meth:`XllamaEngine.interrupt` can end the generation in progress at its next
token (the stream callback returning True cancels the task). The server's HTTP listener is bound to 127.0.0.1
on a free port; nothing here talks to it.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Any

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage

_SLOT_POLL_S = 0.1  # how often a request waiting for a slot looks for an interrupt


@dataclass(frozen=True)
class XllamaSettings:
    """What the engine is built with (all resolved by the adapter: no defaults are guessed here)."""

    path: str
    n_ctx: int  # context window of each slot
    n_threads: int
    n_parallel: int
    chat_template: str | None  # a llama.cpp built-in template name (chatml, gemma, ...) or None: the GGUF's own
    extra_bufts: bool
    verbose: bool


def build_server(settings: XllamaSettings) -> Any:
    """Load the model into an ``xllamacpp.Server`` (raises on a file llama.cpp cannot load)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = settings.path
    params.n_parallel = settings.n_parallel
    params.n_ctx = settings.n_ctx * settings.n_parallel  # split evenly: every slot gets the full window
    params.kv_unified = False
    params.cpuparams.n_threads = settings.n_threads
    params.cpuparams_batch.n_threads = settings.n_threads
    params.warmup = False
    params.no_extra_bufts = not settings.extra_bufts
    params.verbosity = 1 if settings.verbose else -1
    params.n_threads_http = 1
    params.endpoint_metrics = False
    if settings.chat_template:
        params.chat_template = settings.chat_template
    return xllamacpp.Server(params)


class XllamaEngine:
    """One loaded model answering chat requests; thread-safe (llama.cpp's server queues and batches them)."""

    def __init__(self, settings: XllamaSettings, stop: threading.Event | None = None) -> None:
        self.settings = settings
        self.server = build_server(settings)
        self._stop = stop if stop is not None else threading.Event()  # may be shared with the adapter
        # At most one request per slot is handed to the server: a request queued inside it could only be cancelled
        # once it streams (after every request before it), so an interrupt would wait for all of them; one waiting
        # here gives up at once.
        self._slots = threading.BoundedSemaphore(max(1, settings.n_parallel))

    def interrupt(self) -> None:
        """End every generation in progress at its next token; later requests fail until :meth:`reset`."""
        self._stop.set()

    def reset(self) -> None:
        """Forget an interrupt."""
        self._stop.clear()

    def payload(self, request: ChatRequest, seed: int, sampling: dict[str, Any]) -> dict[str, Any]:
        """The OpenAI-style request body for one call."""
        body: dict[str, Any] = {
            "messages": request.as_openai_messages(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": request.seed if request.seed is not None else seed,
            "stream": True,
            "stream_options": {"include_usage": True},
            # llama.cpp's logits depend on how a prompt is split into batches: reusing the cached prefix of the
            # previous request would make a temperature-0 answer depend on what was asked before it (a re-judge in
            # another order would then disagree), so every prompt is processed whole.
            "cache_prompt": False,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.grammar is not None:
            body["grammar"] = request.grammar
        body.update(sampling)
        return body

    def generate(self, request: ChatRequest, seed: int, sampling: dict[str, Any]) -> ChatResult:
        """Run one request to its end (or to an interrupt); errors are returned as failed results."""
        while not self._slots.acquire(timeout=_SLOT_POLL_S):
            if self._stop.is_set():
                break
        else:
            try:
                return self._generate(request, seed, sampling)
            finally:
                self._slots.release()
        return ChatResult(text=None, error="llamacpp: interrupted before this request started")

    def _generate(self, request: ChatRequest, seed: int, sampling: dict[str, Any]) -> ChatResult:
        if self._stop.is_set():
            return ChatResult(text=None, error="llamacpp: interrupted before this request started")
        parts: list[str] = []
        state: dict[str, Any] = {"finish": None, "usage": None, "error": None}

        def on_chunk(chunk: Any) -> bool:
            if not isinstance(chunk, dict):
                state["error"] = f"unexpected stream chunk {chunk!r:.200}"
                return True
            if "error" in chunk or "message" in chunk and "choices" not in chunk:
                error = chunk.get("error", chunk)
                state["error"] = error.get("message", str(error)) if isinstance(error, dict) else str(error)
                return True
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    parts.append(delta["content"])
                if choice.get("finish_reason"):
                    state["finish"] = choice["finish_reason"]
            if chunk.get("usage"):
                state["usage"] = chunk["usage"]
            return self._stop.is_set()  # True cancels the task: the generation ends at its next token

        outcome = self.server.handle_chat_completions(self.payload(request, seed, sampling), on_chunk)
        if isinstance(outcome, dict) and outcome.get("error"):  # rejected before streaming (e.g. prompt too long)
            state["error"] = outcome["error"].get("message", str(outcome["error"]))
        if self._stop.is_set():
            return ChatResult(text=None, error="llamacpp: interrupted (Ctrl-C) during generation")
        if state["error"]:
            return ChatResult(text=None, error=f"llamacpp: {state['error']}")
        if state["finish"] is None:
            return ChatResult(text=None, error="llamacpp: the stream ended without a finish reason")
        usage = state["usage"] or {}
        return ChatResult(
            text="".join(parts),
            finish_reason=state["finish"],
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
        )

    def close(self) -> None:
        """Stop the server's threads and free the model."""
        self.server = None


class XllamaPool:
    """Identical copies of one model (:class:`XllamaEngine`, same settings), each request answered on a free one.

    Every copy processes every prompt whole (no prompt cache), so which copy answers changes nothing in the answer;
    with one thread per copy, ``n`` copies answer ``n`` requests at once on ``n`` cores.
    """

    def __init__(self, engines: list[XllamaEngine]) -> None:
        self.engines = engines
        self.settings = engines[0].settings
        self._free: queue.SimpleQueue[XllamaEngine] = queue.SimpleQueue()
        for engine in engines:
            self._free.put(engine)

    def interrupt(self) -> None:
        """Interrupt every copy (see :meth:`XllamaEngine.interrupt`)."""
        for engine in self.engines:
            engine.interrupt()

    def reset(self) -> None:
        """Forget an interrupt on every copy."""
        for engine in self.engines:
            engine.reset()

    def generate(self, request: ChatRequest, seed: int, sampling: dict[str, Any]) -> ChatResult:
        """Run one request on the first free copy (waiting for one, unless interrupted)."""
        stop = self.engines[0]._stop
        while True:
            try:
                engine = self._free.get(timeout=_SLOT_POLL_S)
                break
            except queue.Empty:
                if stop.is_set():
                    return ChatResult(text=None, error="llamacpp: interrupted before this request started")
        try:
            return engine.generate(request, seed, sampling)
        finally:
            self._free.put(engine)

    def close(self) -> None:
        """Stop every copy."""
        for engine in self.engines:
            engine.close()
