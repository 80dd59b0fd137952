"""Issue 23 point 5: judge answers cut at the token budget never change scores silently, nor stay in the cache."""

from __future__ import annotations

import json

import pytest
from judge_fakes import FakeJudgeAdapter, write_templates
from typer.testing import CliRunner

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.cli import app

TASK = "privasis_sample"


@pytest.fixture(autouse=True)
def fake_judge(monkeypatch):
    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: FakeJudgeAdapter(spec.model) if spec.provider == "fakejudge" else real(spec))
    FakeJudgeAdapter.CALLS.clear()
    monkeypatch.setattr(FakeJudgeAdapter, "CUT_TAG", None)


def _run(tmp_path, prompts, out: str, *extra: str, expect: int) -> dict:
    result = CliRunner().invoke(app, ["run", "-m", "regex-scrubber", "-t", TASK, "--judge", "fakejudge:x", "--judge-prompts",
                                      str(prompts), "-o", str(tmp_path / out), "--cache-dir", str(tmp_path / "cache"),
                                      "--no-progress", "--limit", "6", "--bootstrap-samples", "20",
                                      "--retry-base-delay", "0", "--max-off-label", "1000", *extra],
                                catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return json.loads((tmp_path / out / TASK / "results.json").read_text())


def test_cut_guesses_fail_the_run_and_are_asked_again_once_the_judge_is_healthy(tmp_path, monkeypatch):
    prompts = write_templates(tmp_path / "prompts")
    healthy = _run(tmp_path, prompts, "healthy", "--no-cache", expect=0)
    monkeypatch.setattr(FakeJudgeAdapter, "CUT_TAG", "GUESS_TARGET")
    # the strict default (the sample task itself tolerates cut answers: its answer_policy, overridden here)
    cut = _run(tmp_path, prompts, "cut", "--judge-truncated-answers", "retry", expect=1)  # retried, then unjudged
    assert cut["counts"]["unjudged"] > 0 and cut["complete"] is False and cut["unjudged_records"]
    tolerated = _run(tmp_path, prompts, "tolerated", "--judge-truncated-answers", "accept", expect=0)
    assert tolerated["usage"]["judge"]["truncated"] > 0  # counted (and shown on the board)
    monkeypatch.setattr(FakeJudgeAdapter, "CUT_TAG", None)
    FakeJudgeAdapter.CALLS.clear()
    again = _run(tmp_path, prompts, "again", "--judge-truncated-answers", "retry", expect=0)  # cut answers cached
    # by the tolerant run are not reused
    assert any(p.startswith("GUESS_TARGET") for p in FakeJudgeAdapter.CALLS)
    assert again["metrics"]["headline"] == healthy["metrics"]["headline"]
