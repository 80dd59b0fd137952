"""What a run cost is never forgotten (issue 16, point 6): every invocation's usage is kept in the task
directory's ledger and results carry it with the total, so a resumed or no-op re-run still says what was paid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import OK, Action, FakeOpenAIServer, write_tiny_task

from privasis_bench.pipeline.spend import LEDGER_NAME, ledger_total

pytest.importorskip("openai")


def _args(url: str, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={url}", "--tasks", str(yaml), "--judge", "none",
            "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20", "--max-attempts", "1",
            *extra]


def test_resumed_and_no_op_reruns_keep_what_earlier_invocations_paid(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    broken = {"Note 2:"}  # record r002's prompt
    script = lambda p, n: Action("500") if any(b in p for b in broken) else OK  # noqa: E731
    with FakeOpenAIServer(script=script) as server:
        assert run_main(_args(server.base_url, yaml, out, cache), monkeypatch, capsys)[0] == 1  # one record failed
        first = json.loads((out / "tiny" / "results.json").read_text())
        broken.clear()
        assert run_main(_args(server.base_url, yaml, out, cache), monkeypatch, capsys)[0] == 0  # resumes that record
        assert run_main(_args(server.base_url, yaml, out, cache), monkeypatch, capsys)[0] == 0  # nothing left to do
    last = json.loads((out / "tiny" / "results.json").read_text())
    assert first["usage"]["model"]["batches"] == 4 and first["usage"]["model"]["completion_tokens"] > 0
    assert last["usage"]["model"]["batches"] == 0 and last["usage"]["model"]["completion_tokens"] == 0  # this invocation
    history = last["usage_cumulative"]
    assert [e["command"] for e in history["invocations"]] == ["run", "run", "run"]
    assert [e["usage"]["model"]["batches"] for e in history["invocations"]] == [4, 1, 0]
    total = history["total"]
    assert total["invocations"] == 3 and total["usage"]["model"]["batches"] == 5 and total["usage"]["model"]["failed"] == 1
    paid = sum(server.served.values())
    assert paid == 4 and total["usage"]["model"]["completion_tokens"] == sum(
        e["usage"]["model"]["completion_tokens"] for e in history["invocations"])
    ledger = json.loads((out / "tiny" / LEDGER_NAME).read_text())
    assert ledger_total(ledger["invocations"]) == total


def test_a_run_stopped_by_a_fatal_error_still_records_what_it_paid(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=3)
    out, cache = tmp_path / "out", tmp_path / "cache"
    script = lambda p, n: Action("401") if "Note 2:" in p else OK  # noqa: E731 - the key is revoked mid-run
    with FakeOpenAIServer(script=script) as server:
        code, _, stderr = run_main(_args(server.base_url, yaml, out, cache, "--concurrency", "1"), monkeypatch, capsys)
    assert code == 2 and "401" in stderr
    assert not (out / "tiny" / "results.json").exists()
    [entry] = json.loads((out / "tiny" / LEDGER_NAME).read_text())["invocations"]
    assert entry["usage"]["model"]["batches"] == 3 and entry["usage"]["model"]["completion_tokens"] > 0
