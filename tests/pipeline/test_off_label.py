"""Garbage judge answers are not silent in official mode (issue 16, point 3): counted as off_label, reported,
and the command exits 1 above --max-off-label (default 0), also when the verdicts come from the checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main as main
from fake_openai_server import FakeOpenAIServer, write_tiny_task

pytest.importorskip("openai")


def _args(url: str, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    # The fake server answers every judge question with a rewritten-text reply: never a label.
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={url}", "--tasks", str(yaml),
            "--judge", "openai:fake-judge", "--judge-args", f"base_url={url}", "--output", str(out), "--cache-dir", str(cache),
            "--no-progress", "--bootstrap-samples", "20", *extra]


def test_off_label_judge_answers_are_counted_reported_and_fail_the_run(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=3)
    out, cache = tmp_path / "out", tmp_path / "cache"
    with FakeOpenAIServer() as server:
        code, stdout, _ = main(_args(server.base_url, yaml, out, cache), monkeypatch, capsys)
        res = json.loads((out / "tiny" / "results.json").read_text())
        assert code == 1, stdout
        assert res["complete"] is True and res["checks"]["passed"] is False and res["counts"]["off_label"] > 0
        assert res["counts"]["off_label"] == len(res["off_label_answers"])
        assert {a["question"] for a in res["off_label_answers"]} == {"compare", "inclusion"}
        assert "not one of the expected labels" in stdout

        # verdicts reused from the checkpoint are counted too; a tolerance lets the run pass
        code, stdout, _ = main(_args(server.base_url, yaml, out, cache), monkeypatch, capsys)
        again = json.loads((out / "tiny" / "results.json").read_text())
        assert code == 1 and again["counts"]["off_label"] == res["counts"]["off_label"]
        code, stdout, _ = main(_args(server.base_url, yaml, out, cache, "--max-off-label", "1000"), monkeypatch, capsys)
        assert code == 0, stdout
        checks = json.loads((out / "tiny" / "results.json").read_text())["checks"]
        assert checks["max_off_label"] == 1000 and checks["passed"] is True
