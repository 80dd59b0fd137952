"""Keys echoed inside successful answers reach no file (issue 16, point 8): a server that puts the presented key
in its 200 answers, for the model and for the judge, leaves no trace of either key in the run directory (outputs,
checkpoint, samples, results, ledger) or in the response cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import Action, FakeOpenAIServer, write_tiny_task

pytest.importorskip("openai")

MODEL_KEY = "sk-model-ECHO-0123456789"
JUDGE_KEY = "judge-env-ECHO-9876543210"


def test_keys_echoed_in_model_and_judge_answers_reach_no_file(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", JUDGE_KEY)  # the judge's key comes from the environment
    yaml = write_tiny_task(tmp_path / "task", n=3)
    out, cache = tmp_path / "out", tmp_path / "cache"
    echo = lambda p, n: Action(content=f"Rewritten. Debug: key={{key}} for {len(p)}")  # noqa: E731
    with FakeOpenAIServer(script=echo) as server:
        code, stdout, stderr = run_main(
            ["run", "--model", "openai:fake-model", "--model-args", f"base_url={server.base_url},api_key={MODEL_KEY}",
             "--tasks", str(yaml), "--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}",
             "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20",
             "--max-off-label", "1000"], monkeypatch, capsys)
    assert code == 0, stdout + stderr
    samples = (out / "tiny" / "samples.jsonl").read_text()
    assert "key=***" in samples  # the answers were kept, only the keys removed
    files = [p for p in [*out.rglob("*"), *cache.rglob("*")] if p.is_file()]
    assert len(files) >= 5
    leaked = [p for p in files for key in (MODEL_KEY, JUDGE_KEY) if key.encode() in p.read_bytes()]
    assert leaked == [] and MODEL_KEY not in stdout + stderr and JUDGE_KEY not in stdout + stderr
