"""Model and judge work at the same time (issue 12): a record's output goes to the judge as soon as it lands,
while the model is still answering later records; results are the same as with the stages one after another."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_main import run_main
from fake_openai_server import OK, Action, FakeOpenAIServer, write_tiny_task


def _args(model_url: str, judge_url: str, yaml: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={model_url}", "--tasks", str(yaml),
            "--judge", "openai:fake-judge", "--judge-args", f"base_url={judge_url}", "--output", str(out),
            "--no-cache", "--no-progress", "--bootstrap-samples", "20", "--max-off-label", "1000", *extra]


def test_the_judge_starts_while_the_model_is_still_sanitizing(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=6)
    seen: list[tuple[float, str]] = []

    def log(role: str):
        def script(prompt: str, n: int) -> Action:
            seen.append((time.monotonic(), role))
            return OK
        return script

    with FakeOpenAIServer(delay=0.05, script=log("model")) as model, FakeOpenAIServer(script=log("judge")) as judge:
        code, stdout, _ = run_main(_args(model.base_url, judge.base_url, yaml, tmp_path / "out", "--concurrency", "1",
                                         "--judge-concurrency", "4"), monkeypatch, capsys)
    assert code == 0, stdout
    last_model = max(t for t, role in seen if role == "model")
    first_judge = min(t for t, role in seen if role == "judge")
    assert first_judge < last_model, "judging waited for the whole sanitize stage"
    assert sum(role == "model" for _, role in seen) == 6


def test_pipelined_results_match_one_record_at_a_time(tmp_path: Path, monkeypatch, capsys) -> None:
    """Concurrency changes when things happen, never what is written (samples byte-identical, same metrics)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=6)
    outs = {}
    with FakeOpenAIServer(delay=0.01) as server:
        for conc in ("1", "8"):
            out = tmp_path / f"out{conc}"
            code, stdout, _ = run_main(_args(server.base_url, server.base_url, yaml, out, "--concurrency", conc),
                                       monkeypatch, capsys)
            assert code == 0, stdout
            outs[conc] = out / "tiny"
    a, b = (json.loads((outs[c] / "results.json").read_text()) for c in ("1", "8"))
    assert a["metrics"] == b["metrics"] and a["counts"] == b["counts"] and a["judge_calls"] == b["judge_calls"]
    assert (outs["1"] / "samples.jsonl").read_bytes() == (outs["8"] / "samples.jsonl").read_bytes()
    assert (outs["1"] / "sanitized.jsonl").read_text().count("\n") == 6
