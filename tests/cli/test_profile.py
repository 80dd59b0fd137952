"""`run --profile` says where the time went, from the engines' own clocks."""

from __future__ import annotations

import re

from fake_openai_server import FakeOpenAIServer, write_tiny_task
from judge_fakes import deterministic_answer, parse_prompt, write_templates
from rich.console import Console
from typer.testing import CliRunner

from privasis_bench.cli import app


def test_profile_reports_model_and_judge_time(tmp_path, monkeypatch):
    # The command's console read its width when its module was first imported (by whichever test came first, in
    # whichever process): give it a wide one so that the table's rows are not wrapped whatever ran before.
    monkeypatch.setattr("privasis_bench.cli.outcome_report.console", Console(width=200))  # prints the table
    task = write_tiny_task(tmp_path / "task", n=3)
    prompts = write_templates(tmp_path / "prompts")
    with FakeOpenAIServer(delay=0.05) as model, \
            FakeOpenAIServer(delay=0.02, reply=lambda p: deterministic_answer(*parse_prompt(p))) as judge:
        result = CliRunner().invoke(app, [
            "run", "-m", f"openai:m,base_url={model.base_url}", "-t", str(task), "-o", str(tmp_path / "out"),
            "--judge", f"openai:j,base_url={judge.base_url}", "--judge-prompts", str(prompts),
            "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--bootstrap-samples", "20", "--profile",
        ], catch_exceptions=False, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "where the time went" in result.output
    busy = {role: float(seconds) for role, seconds in
            re.findall(r"(model|judge) openai:\w+: a call in flight\s*│\s*([\d.]+)", result.output)}
    assert busy["model"] >= 0.1  # three calls of at least 50 ms, one after another or overlapping
    assert busy["judge"] > 0
    assert re.search(r"judge: summed call time \((\d+) adapter calls for (\d+) requests\)", result.output)
