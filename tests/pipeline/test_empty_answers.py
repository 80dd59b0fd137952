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


def test_cut_judge_answers_name_the_budget_and_the_flag_not_a_rerun(tmp_path: Path, monkeypatch, capsys) -> None:
    """Issue 34 point 9: a re-run would be cut the same way, so the advice is the budget and --judge-truncated-answers."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)

    def script(prompt: str, n: int) -> Action:
        is_model = prompt.rstrip().endswith(ANSWER_CUE)
        return OK if is_model else Action(content="Maria Ros", finish_reason="length")

    with FakeOpenAIServer(script=script) as server:
        code, stdout, _ = run_main(_args(server.base_url, yaml, tmp_path / "out", tmp_path / "cache"), monkeypatch, capsys)
    results = json.loads((tmp_path / "out" / "tiny" / "results.json").read_text())
    text = " ".join(stdout.split())
    assert code == 1 and results["counts"]["unjudged_cut_at_budget"] == results["counts"]["unjudged"] == 2
    assert "cut at the token budget (guess 512, compare 4096 tokens)" in text, text
    assert "--judge-truncated-answers accept" in text and "--judge-guess-max-tokens" in text
    assert "re-run the same command" not in text


def test_sanitize_counts_failures_that_were_cut_and_names_the_fix(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)
    with FakeOpenAIServer(script=lambda p, n: Action(content="REWRITTEN but cut", finish_reason="length")) as server:
        code, stdout, err = run_main(["sanitize", "-m", "openai:fake-model", "--model-args", f"base_url={server.base_url}",
                                      "-t", str(yaml), "-o", str(tmp_path / "s"), "--no-cache", "--no-progress",
                                      "--retry-base-delay", "0.01", "--max-tokens", "50"], monkeypatch, capsys)
    assert code != 0 and "2 failed" in stdout and "2 cut at the token budget (2 of them failed)" in " ".join(stdout.split())
    assert "(50 tokens): raise --max-tokens or pass --truncated-answers accept" in " ".join(err.split()), err


def test_cut_model_outputs_in_run_name_the_budget_and_the_flag(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)

    def script(prompt: str, n: int) -> Action:
        return Action(content="REWRITTEN but cut", finish_reason="length") if prompt.rstrip().endswith(ANSWER_CUE) else OK

    with FakeOpenAIServer(script=script) as server:
        code, stdout, _ = run_main(_args(server.base_url, yaml, tmp_path / "out", tmp_path / "cache"), monkeypatch, capsys)
    results = json.loads((tmp_path / "out" / "tiny" / "results.json").read_text())
    text = " ".join(stdout.split())
    assert code == 1 and results["counts"]["failed_outputs_cut_at_budget"] == results["counts"]["failed_outputs"] == 2
    assert "2 of them because every answer was cut at the token budget (64 tokens)" in text, text
    assert "raise --max-tokens or pass --truncated-answers accept" in text and "re-running `run`" not in text
