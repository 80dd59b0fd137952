"""Error classification of the openai and anthropic adapters against a real local HTTP server.

The server (127.0.0.1, random port, a thread of this test process) answers by model name: success,
429 with Retry-After (seconds, HTTP date or retry-after-ms), 500, 401 echoing the presented key, 400,
or a stall longer than the client's timeout. This is fault injection: the SDKs, HTTP stack and our
classification run for real.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest

from privasis_bench.adapters.base import AdapterError, ChatRequest
from privasis_bench.adapters.http_errors import parse_retry_after, scrub
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec

SECRET = "sk-test-THIS-KEY-MUST-NOT-LEAK-0123456789"
STALL_S = 0.8  # how long the "stall" model takes to answer: well past the 0.3 s timeouts below, short enough to wait out


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def _reply(self, status: int, body: dict, headers: dict | None = None) -> None:
        blob = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(blob)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(blob)
        except OSError:  # the client gave up (the stall case): nothing to answer
            pass

    def do_POST(self):  # noqa: N802
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, payload))
        model = payload["model"]
        key = self.headers.get("Authorization", "") or self.headers.get("x-api-key", "")
        anthropic = self.path.endswith("/messages")
        error = lambda msg: {"error": {"message": msg, "type": "error"}, "type": "error"}  # noqa: E731
        if model == "ok" and anthropic:
            self._reply(200, {"id": "m1", "type": "message", "role": "assistant", "model": model,
                              "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                          {"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}],
                              "stop_reason": "max_tokens", "stop_sequence": None,
                              "usage": {"input_tokens": 11, "output_tokens": 4}})
        elif model == "ok":
            self._reply(200, {"id": "c1", "object": "chat.completion", "created": 0, "model": model,
                              "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                  "role": "assistant", "content": "final answer", "reasoning_content": "thinking..."}}],
                              "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}})
        elif model == "rate-limited":
            self._reply(429, error("slow down"), {"Retry-After": "7"})
        elif model == "rate-limited-ms":
            self._reply(429, error("slow down"), {"retry-after-ms": "1500", "Retry-After": "9"})
        elif model == "rate-limited-date":
            when = email.utils.formatdate(time.time() + 30, usegmt=True)
            self._reply(429, error("slow down"), {"Retry-After": when})
        elif model == "server-error":
            self._reply(500, error("internal error"))
        elif model == "overloaded":
            self._reply(529, error("overloaded"))
        elif model == "unauthorized":
            self._reply(401, error(f"Incorrect API key provided: {key}"))
        elif model == "bad-request":
            self._reply(400, error("max_tokens is too large"))
        elif model == "stall":
            time.sleep(STALL_S)
            self._reply(200, {})
        else:
            self._reply(404, error(f"model {model} not found"))


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.seen = []
    httpd.daemon_threads = True
    thread = Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    httpd.shutdown()
    httpd.server_close()


def call(provider: str, base: str, model: str, **args):
    root = base + "/v1" if provider == "openai" else base
    adapter = build_adapter(ModelSpec.parse(f"{provider}:{model}", {"base_url": root, "api_key": SECRET, **args}))
    request = ChatRequest.user("Sanitize: Lena Okafor", max_tokens=32)

    async def go():
        try:
            return await adapter.agenerate(request)
        finally:
            await adapter.aclose()

    return asyncio.run(go())


def failure(provider: str, base: str, model: str, **args) -> AdapterError:
    with pytest.raises(AdapterError) as info:
        call(provider, base, model, **args)
    assert SECRET not in str(info.value)
    return info.value


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_success_parses_text_usage_and_finish_reason(server, provider):
    base, httpd = server
    result = call(provider, base, "ok")
    if provider == "openai":
        assert (result.text, result.finish_reason) == ("final answer", "stop")  # reasoning_content dropped
        assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (12, 3)
        path, payload = httpd.seen[-1]
        assert path == "/v1/chat/completions" and payload["max_tokens"] == 32 and payload["temperature"] == 0.0
    else:
        assert (result.text, result.finish_reason) == ("Hello there", "length")  # thinking block dropped
        assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (11, 4)
        path, payload = httpd.seen[-1]
        assert path == "/v1/messages" and payload["max_tokens"] == 32
        assert payload["temperature"] == 0.0  # a base_url server gets the temperature, whatever the SDK version


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_rate_limits_are_retryable_with_retry_after(server, provider):
    base, _ = server
    err = failure(provider, base, "rate-limited")
    assert (err.retryable, err.status, err.retry_after) == (True, 429, 7.0)
    assert failure(provider, base, "rate-limited-ms").retry_after == 1.5
    assert 20 < failure(provider, base, "rate-limited-date").retry_after <= 31


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_server_errors_are_retryable(server, provider):
    base, _ = server
    for model, status in (("server-error", 500), ("overloaded", 529)):
        err = failure(provider, base, model)
        assert (err.retryable, err.status) == (True, status)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_client_errors_are_not_retryable_and_never_show_the_key(server, provider):
    base, _ = server
    err = failure(provider, base, "unauthorized")
    assert (err.retryable, err.status) == (False, 401)
    assert "Incorrect API key" in str(err)
    assert (failure(provider, base, "bad-request").status, failure(provider, base, "no-such-model").status) == (400, 404)
    assert not failure(provider, base, "bad-request").retryable


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_timeouts_and_refused_connections_are_retryable(server, provider):
    base, _ = server
    err = failure(provider, base, "stall", timeout=0.3)
    assert err.retryable and err.status is None and "timed out" in str(err)
    err = failure(provider, "http://127.0.0.1:9", "ok")  # nothing listens on the discard port
    assert err.retryable and err.refused and "connection refused at http://127.0.0.1:9/" in str(err)


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert parse_retry_after({"Retry-After": "soon"}) is None and parse_retry_after({}) is None


def test_scrub_removes_keys_and_bearer_tokens():
    text = f"bad key {SECRET}; header Authorization: Bearer abcdef123456; other sk-proj-zzzzzzzzzz"
    cleaned = scrub(text, [SECRET])
    assert SECRET not in cleaned and "abcdef123456" not in cleaned and "sk-proj-zzzz" not in cleaned


@pytest.mark.parametrize("args, named", [
    ({"base_url": "notaurl"}, "base_url='notaurl' is not an http"),
    ({"base_url": "ftp://host/v1"}, "is not an http"),
    ({"base_url": "http://127.0.0.1:9/v1", "reasoning": "maybe"}, "reasoning='maybe' must be true or false"),
])
def test_model_arguments_that_would_fail_every_record_are_refused_up_front(args, named):
    from privasis_bench.adapters.registry import build_adapter
    from privasis_bench.adapters.spec import ModelSpec
    from privasis_bench.errors import ModelSpecError

    with pytest.raises(ModelSpecError, match=named):
        build_adapter(ModelSpec.parse("openai:x", args))


def test_reasoning_takes_true_and_false_only():
    from privasis_bench.adapters.registry import build_adapter
    from privasis_bench.adapters.spec import ModelSpec

    for value, expected in (("true", True), ("false", False), ("yes", True), ("0", False)):
        adapter = build_adapter(ModelSpec.parse(f"openai:gpt-4.1,base_url=http://127.0.0.1:9/v1,reasoning={value}"))
        assert adapter.reasoning is expected


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_request_timeout_follows_the_token_budget_unless_given(server, provider, monkeypatch):
    from privasis_bench.adapters import http_errors

    base, _ = server  # "stall" answers after STALL_S
    monkeypatch.setattr(http_errors, "DEFAULT_TIMEOUT_S", 0.3)
    monkeypatch.setattr(http_errors, "TIMEOUT_BASE_S", 0.0)
    monkeypatch.setattr(http_errors, "TIMEOUT_PER_TOKEN_S", 0.001)  # 32 tokens: the 0.3 s floor
    assert failure(provider, base, "stall").timeout
    monkeypatch.setattr(http_errors, "TIMEOUT_PER_TOKEN_S", 0.2)  # 32 tokens: 6.4 s, the stalled reply arrives
    assert not failure(provider, base, "stall").timeout  # (an empty body: malformed, but not a timeout)
    assert failure(provider, base, "stall", timeout=0.3).timeout  # the user's value wins
    assert http_errors.request_timeout(None, 4096) == pytest.approx(0.2 * 4096)
    assert http_errors.request_timeout(12.0, 4096) == 12.0
