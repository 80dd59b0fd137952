"""Failed model outputs never look like a success: `run` exits 1 and results say complete: false (issue 16, point 1).

Driven through the console-script entry point against the local fake OpenAI server; a re-run with the server
healthy sends only the prompts that failed and exits 0.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cli_main import run_main as main
from fake_openai_server import OK, Action, FakeOpenAIServer, write_tiny_task
from privasis_bench.data.loading import load_records
from privasis_bench.protocol.testee import build_sanitize_request
from privasis_bench.tasks.registry import load_task

pytest.importorskip("openai")


def run_args(base_url: str, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={base_url},timeout=5", "--tasks", str(yaml),
            "--judge", "none", "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20",
            "--max-attempts", "1", *extra]


def prompts_of(yaml: Path) -> list[str]:
    task = load_task(str(yaml))
    return [build_sanitize_request(r, task).messages[0][1] for r in load_records(task).scored]


def results(out: Path) -> dict:
    return json.loads((out / "tiny" / "results.json").read_text())


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more: connection refused


def test_endpoint_down_exits_non_zero_and_marks_results_incomplete(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    code, stdout, stderr = main(run_args(closed_port_url(), yaml, out, cache), monkeypatch, capsys)
    assert code == 1, stdout + stderr
    res = results(out)
    assert res["complete"] is False and res["counts"]["failed_outputs"] == 4
    assert res["checks"]["failed_outputs"] == "incomplete"
    assert "4 model output(s) failed" in stdout and "incomplete" in stdout and "Traceback" not in stdout + stderr


def test_rerun_with_a_healthy_server_finishes_only_the_failed_records(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    prompts = prompts_of(yaml)
    out, cache = tmp_path / "out", tmp_path / "cache"
    down = {prompts[1], prompts[2]}
    with FakeOpenAIServer(script=lambda p, n: Action("500") if p in down else OK) as server:
        args = run_args(server.base_url, yaml, out, cache)
        code, stdout, _ = main(args, monkeypatch, capsys)
        assert code == 1, stdout
        first = results(out)
        assert first["complete"] is False and first["failed_output_records"] == ["r001", "r002"]

        down.clear()
        before = dict(server.received)
        code, stdout, _ = main(args, monkeypatch, capsys)
        assert code == 0, stdout
        again = {p: n - before.get(p, 0) for p, n in server.received.items() if n - before.get(p, 0)}
        assert again == {prompts[1]: 1, prompts[2]: 1}  # only the failed records were sent again
    second = results(out)
    assert second["complete"] is True and second["counts"]["failed_outputs"] == 0


def test_score_failed_as_empty_keeps_the_old_behaviour_and_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=3)
    out = tmp_path / "out"
    code, stdout, stderr = main(run_args(closed_port_url(), yaml, out, tmp_path / "cache", "--score-failed-as-empty"),
                                monkeypatch, capsys)
    assert code == 0, stdout + stderr
    res = results(out)
    assert res["complete"] is True and res["counts"]["failed_outputs"] == 3
    assert res["checks"]["failed_outputs"] == "scored_as_empty"
    assert "scored as empty outputs" in stdout
