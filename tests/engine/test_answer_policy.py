"""Empty and cut-off answers (HTTP 200) are retryable failures that are never cached (issue 16, point 2), and
configured secrets echoed inside successful answers never reach a file (point 8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai_server import OK, Action, FakeOpenAIServer, write_tiny_task

from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.loading import load_records
from privasis_bench.engine.answers import AnswerPolicy, redact
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.pipeline.flow import run_sanitize
from privasis_bench.tasks.registry import load_task

pytest.importorskip("openai")

KEY = "sk-test-ECHOED-KEY-42"
FAST = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.02, jitter=0.0)


def _sanitize(tmp_path: Path, server: FakeOpenAIServer, out: str, answers: AnswerPolicy = AnswerPolicy(), n: int = 3):
    task = load_task(str(write_tiny_task(tmp_path / "task", n=n)))
    records = load_records(task).scored
    spec = ModelSpec.parse("openai:fake-model", {"base_url": server.base_url, "timeout": 5, "api_key": KEY})
    cache = ResponseCache(tmp_path / "cache")
    with Engine(build_adapter(spec), spec, role="model", cache=cache, retry=FAST, concurrency=2, progress=False,
                answers=answers) as engine:
        outputs = run_sanitize(records, task, engine, tmp_path / out / "sanitized.jsonl")
    cache.close()
    return outputs, engine.stats


def test_a_transient_empty_answer_is_asked_again(tmp_path: Path) -> None:
    script = lambda p, n: Action(content="") if n == 0 else OK  # noqa: E731 - every prompt's first answer is empty
    with FakeOpenAIServer(script=script) as server:
        outputs, stats = _sanitize(tmp_path, server, "out")
        assert set(server.received.values()) == {2}
    assert all(o.ok and o.output.startswith("REWRITTEN") for o in outputs)
    assert stats.rejected_answers == 3 and stats.failed == 0 and [o.attempts for o in outputs] == [2, 2, 2]


def test_persistent_empty_or_cut_answers_fail_and_are_never_cached(tmp_path: Path) -> None:
    broken = {"on": True}

    def script(prompt: str, n: int) -> Action:
        if not broken["on"]:
            return OK
        return Action(content="") if "Person0" in prompt else Action(content="REWRITTEN but cut", finish_reason="length")

    with FakeOpenAIServer(script=script) as server:
        outputs, stats = _sanitize(tmp_path, server, "out")
        assert not any(o.ok for o in outputs) and stats.failed == 3
        assert "empty answer" in outputs[0].error and "finish_reason length" in outputs[1].error
        assert set(server.received.values()) == {AnswerPolicy().max_attempts}  # bounded: each try is paid for
        assert stats.usage.completion_tokens > 0  # the rejected answers' tokens are still reported as paid
        broken["on"] = False
        before = sum(server.received.values())
        outputs, stats = _sanitize(tmp_path, server, "out")  # same output file and cache, server healthy now
        assert sum(server.received.values()) - before == 3  # nothing bad was cached: every record asked again
    assert all(o.ok and o.output.startswith("REWRITTEN") for o in outputs) and stats.cached == 0


def test_cut_answers_can_be_accepted_and_are_counted(tmp_path: Path) -> None:
    script = lambda p, n: Action(content="REWRITTEN but cut", finish_reason="length")  # noqa: E731
    with FakeOpenAIServer(script=script) as server:
        outputs, stats = _sanitize(tmp_path, server, "a", AnswerPolicy(truncated="accept"))
        assert all(o.ok and o.finish_reason == "length" for o in outputs) and stats.truncated == 3
        _, again = _sanitize(tmp_path, server, "b", AnswerPolicy(truncated="accept"))  # accepted as final: cached
        assert again.cached == 3 and set(server.received.values()) == {1}
        _, strict = _sanitize(tmp_path, server, "c")  # the default policy does not take them from the cache
        assert strict.cached == 0 and set(server.received.values()) == {1 + AnswerPolicy().max_attempts}


def test_a_key_echoed_in_a_successful_answer_reaches_no_file(tmp_path: Path) -> None:
    script = lambda p, n: Action(content=f"REWRITTEN text; your key is {{key}} ok {p[:20]}")  # noqa: E731
    with FakeOpenAIServer(script=script) as server:
        outputs, _ = _sanitize(tmp_path, server, "out")
    assert all(o.ok and "***" in o.output for o in outputs)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and not [p for p in files if KEY.encode() in p.read_bytes()]


def test_redact_removes_only_configured_values() -> None:
    assert redact("a sk-live-123456789 b", ["sk-live-123456789"]) == "a *** b"
    assert redact("sk-other-987654321 stays", ["sk-live-123456789"]) == "sk-other-987654321 stays"
    assert redact("short", ["short"]) == "short"  # too short to search for in ordinary text
