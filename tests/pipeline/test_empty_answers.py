"""An HTTP 200 with empty content is not an answer (issue 16, point 2), end to end: with the model or the judge
answering empty, `run` exits 1; once the server is healthy, the re-run asks again (nothing empty was cached or
checkpointed) and finishes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_main import run_main
from fake_openai_server import ANSWER_CUE, OK, Action, FakeOpenAIServer, write_tiny_task

pytest.importorskip("openai")


def _args(url: str, yaml: Path, out: Path, cache: Path) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={url}", "--tasks", str(yaml),
            "--judge", "openai:fake-judge", "--judge-args", f"base_url={url}", "--output", str(out), "--cache-dir", str(cache),
            "--no-progress", "--bootstrap-samples", "20", "--retry-base-delay", "0.01", "--max-off-label", "1000"]


@pytest.mark.parametrize("role", ["model", "judge"])
def test_empty_answers_fail_the_run_and_are_asked_again_once_healthy(role: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)
    out, cache = tmp_path / "out", tmp_path / "cache"
    empty = {"on": True}

    def script(prompt: str, n: int) -> Action:
        is_model = prompt.rstrip().endswith(ANSWER_CUE)
        return Action(content="  ") if empty["on"] and is_model == (role == "model") else OK

    with FakeOpenAIServer(script=script) as server:
        code, stdout, _ = run_main(_args(server.base_url, yaml, out, cache), monkeypatch, capsys)
        first = json.loads((out / "tiny" / "results.json").read_text())
        assert code == 1, stdout
        assert first["complete"] is False
        if role == "model":
            assert first["counts"]["failed_outputs"] == 2
        else:
            assert first["counts"]["unjudged"] == 2
        assert first["usage"][role]["rejected_answers"] > 0
        empty["on"] = False
        before = sum(server.received.values())
        code, stdout, _ = run_main(_args(server.base_url, yaml, out, cache), monkeypatch, capsys)
        assert code == 0, stdout
        assert sum(server.received.values()) > before  # asked again: the empty answers were never stored
    second = json.loads((out / "tiny" / "results.json").read_text())
    assert second["complete"] is True and second["counts"]["failed_outputs"] == second["counts"]["unjudged"] == 0
