"""A stalled request is bounded and announced (issue 16, point 9): timeouts are retried at most
``max_timeouts`` times, each retry prints one line, and the defaults bound a stall to minutes."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai_server import OK, Action, FakeOpenAIServer

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.http_errors import DEFAULT_TIMEOUT_S
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.retry import RetryPolicy

pytest.importorskip("openai")


def _engine(server: FakeOpenAIServer, retry: RetryPolicy) -> Engine:
    spec = ModelSpec.parse("openai:slow-model", {"base_url": server.base_url, "timeout": 0.3})
    return Engine(build_adapter(spec), spec, role="model", cache=None, retry=retry, concurrency=1, progress=False)


def test_a_stalled_request_fails_after_max_timeouts_with_a_line_per_retry(tmp_path: Path, capsys) -> None:
    retry = RetryPolicy(max_attempts=6, max_timeouts=2, base_delay=0.01, max_delay=0.02, jitter=0.0)
    with FakeOpenAIServer(script=lambda p, n: Action("stall", seconds=1.0)) as server:
        with _engine(server, retry) as engine:
            [result] = engine.run([ChatRequest.user("stall forever", max_tokens=8)], desc="t")
        assert server.received["stall forever"] == 2  # not max_attempts (6) times the timeout
    assert not result.ok and "timed out" in result.error and "gave up after 2 attempts" in result.error
    assert engine.stats.timeouts == 2
    lines = [l for l in capsys.readouterr().err.splitlines() if "retrying in" in l]
    assert len(lines) == 1
    assert "openai:slow-model" in lines[0] and "timeout=SECONDS" in lines[0] and "--model-args" in lines[0]


def test_a_single_stall_is_retried_and_succeeds(capsys) -> None:
    retry = RetryPolicy(max_attempts=6, max_timeouts=2, base_delay=0.01, max_delay=0.02, jitter=0.0)
    script = lambda p, n: Action("stall", seconds=1.0) if n == 0 else OK  # noqa: E731
    with FakeOpenAIServer(script=script) as server:
        with _engine(server, retry) as engine:
            [result] = engine.run([ChatRequest.user("stall once", max_tokens=8)], desc="t")
    assert result.ok and result.attempts == 2
    assert "retrying in" in capsys.readouterr().err


def test_default_stall_bound_is_minutes_not_an_hour() -> None:
    policy = RetryPolicy()
    worst = DEFAULT_TIMEOUT_S * policy.max_timeouts + policy.max_delay * (policy.max_timeouts - 1)
    assert worst <= 10 * 60
