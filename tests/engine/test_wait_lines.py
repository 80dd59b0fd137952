"""Issue 34 point 6: a long wait before a retry prints one line with its reason and time, a Retry-After capped by
--retry-max-delay says so, and the end of a run summarises a degrading server (retries, faults by kind)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import OK, Action, FakeOpenAIServer, write_tiny_task

from privasis_bench.engine.retry import RetryPolicy, fault_kind
from privasis_bench.engine.stats import EngineStats, fault_summary

pytest.importorskip("openai")


def _args(url: str, yaml: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={url}", "--tasks", str(yaml), "--judge",
            "none", "--output", str(out), "--no-cache", "--no-progress", "--bootstrap-samples", "20",
            "--concurrency", "1", *extra]


def test_a_capped_retry_after_says_so_with_the_time(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-x")
    yaml = write_tiny_task(tmp_path / "task", n=2)
    script = lambda p, n: Action("429", retry_after="120") if "Note 1:" in p and n == 0 else OK  # noqa: E731
    with FakeOpenAIServer(script=script) as server:
        code, out, err = run_main(_args(server.base_url, yaml, tmp_path / "out", "--retry-max-delay", "0.05",
                                        "--retry-base-delay", "0.01"), monkeypatch, capsys)
    assert code == 0, (out, err)
    waits = [line for line in err.splitlines() if "waiting" in line]
    assert len(waits) == 1, err
    assert "HTTP 429" in waits[0] and "the server asked to wait 120s (Retry-After), capped at 0.05s by --retry-max-delay" \
        in waits[0]
    assert re.search(r"waiting 0\.1s until \d\d:\d\d:\d\d|waiting 0\.0s until \d\d:\d\d:\d\d", waits[0]), waits[0]
    summary = [line for line in out.splitlines() if "faults:" in line]
    assert len(summary) == 1 and "1 retry" in summary[0] and "HTTP 429 x1" in summary[0], out


def test_long_back_off_waits_are_announced_and_a_degrading_server_is_summarised(tmp_path: Path, monkeypatch,
                                                                                capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-x")
    monkeypatch.setattr("privasis_bench.engine.executor.LONG_WAIT_S", 0.0)  # every wait counts as long here
    yaml = write_tiny_task(tmp_path / "task", n=3)
    # the server gets worse: record 0 is fine, record 1 fails once, record 2 twice (once with a 503)
    plans = {"Note 1:": [Action("500")], "Note 2:": [Action("500"), Action("429")]}

    def script(prompt: str, n: int) -> Action:
        for key, actions in plans.items():
            if key in prompt and n < len(actions):
                return actions[n]
        return OK

    with FakeOpenAIServer(script=script) as server:
        code, out, err = run_main(_args(server.base_url, yaml, tmp_path / "out", "--retry-base-delay", "0.01",
                                        "--retry-max-delay", "0.02"), monkeypatch, capsys)
    assert code == 0, (out, err)
    waits = [line for line in err.splitlines() if "waiting" in line]
    assert len(waits) == 3, err  # one line per wait, each with the reason and when the retry starts
    assert sum("back-off before attempt 2 of at most" in w for w in waits) == 2
    assert sum("back-off before attempt 3 of at most" in w for w in waits) == 1
    assert all(re.search(r"until \d\d:\d\d:\d\d \(", w) for w in waits)
    [summary] = [line for line in out.splitlines() if "faults:" in line]
    assert "3 retries" in summary and "HTTP 500 x2" in summary and "HTTP 429 x1" in summary
    assert "0 request(s) failed in the end" in summary


def test_short_waits_stay_quiet_and_a_clean_run_has_no_summary(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-x")
    yaml = write_tiny_task(tmp_path / "task", n=2)
    script = lambda p, n: Action("500") if "Note 1:" in p and n == 0 else OK  # noqa: E731
    with FakeOpenAIServer(script=script) as server:
        code, out, err = run_main(_args(server.base_url, yaml, tmp_path / "a", "--retry-base-delay", "0.01"),
                                  monkeypatch, capsys)
        assert code == 0 and "waiting" not in err  # a 0.01 s back-off is not worth a line
        assert "faults: HTTP 500 x1" in out
        code, out, err = run_main(_args(server.base_url, yaml, tmp_path / "b"), monkeypatch, capsys)
    assert code == 0 and "faults:" not in out and "waiting" not in err


def test_the_reason_names_the_cap_only_when_it_applies() -> None:
    policy = RetryPolicy(max_retry_after=60.0)
    assert policy.capped(120) and not policy.capped(30) and not policy.capped(None)
    assert "capped at 60s" in policy.reason(1, 120) and "capped" not in policy.reason(1, 30)
    assert policy.reason(2, None) == "back-off before attempt 3 of at most 6"
    assert (fault_kind(None, True), fault_kind(503, False), fault_kind(None, False), fault_kind(200, False, True)) == (
        "timeout", "HTTP 503", "connection or other error", "empty or cut answer")
    assert fault_summary("judge", "x", EngineStats()) is None
