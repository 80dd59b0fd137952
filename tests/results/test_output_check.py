"""rescore (and so leaderboard verify) checks each output against the recorded post-processing of its raw answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.protocol.output_check import check_output, output_rule, postprocess_mode
from privasis_bench.results.rescore import rescore_task

TASK = "privasis_sample"


def _invoke(*args: str, expect: int = 0) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result.output


def _rows(task_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (task_dir / "samples.jsonl").read_text().splitlines()]


def _rewrite(task_dir: Path, rows: list[dict]) -> None:
    (task_dir / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_rules_per_results():
    cue = "### Sanitized text:"
    run = {"testee_prompt": {"answer_cue": cue}, "model": {"predictions": None}}
    assert postprocess_mode(run) == "testee" and output_rule(run)("assistant\nX\n" + cue) == "X"
    verbatim = {"testee_prompt": {"answer_cue": cue}, "model": {"predictions": {"format": "reference", "postprocess": "none"}}}
    assert output_rule(verbatim)("  assistant X ") == "  assistant X "
    own_file = {"model": {"predictions": {"format": "sanitized", "postprocess": "none"}}}
    assert output_rule(own_file) is None  # cleaned when it was written: nothing to re-derive
    assert output_rule({"model": {}}) is None  # an older results file without testee_prompt
    row = {"record_id": "r1", "raw_output": "assistant\nX", "output": "Y"}
    bad = check_output(row, output_rule(run))
    assert bad is not None and bad.field == "output" and bad.derived == "X" and "r1" in str(bad)
    assert check_output({**row, "output": "X"}, output_rule(run)) is None


@pytest.mark.parametrize("fmt_args, postprocess", [((), "none"), (("--predictions-postprocess", "testee"), "testee")])
def test_rescore_catches_an_output_edited_apart_from_its_raw_answer(tmp_path, fmt_args, postprocess):
    _invoke("run", "-m", "identity", "-t", TASK, "--judge", "none", "-o", str(tmp_path / "run"), "--no-progress",
            "--cache-dir", str(tmp_path / "cache"), "--bootstrap-samples", "20", "--limit", "4")
    sanitized = [json.loads(x) for x in (tmp_path / "run" / TASK / "sanitized.jsonl").read_text().splitlines()]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "model_sanitized_text": f"  {r['output']}\n"}) + "\n"
                             for r in sanitized))
    _invoke("evaluate", "-p", str(preds), "-t", TASK, "--judge", "none", "-o", str(tmp_path / "ev"), "--no-progress",
            "--bootstrap-samples", "20", "--limit", "4", *fmt_args)
    task_dir = tmp_path / "ev" / TASK
    results = json.loads((task_dir / "results.json").read_text())
    assert results["model"]["predictions"]["postprocess"] == postprocess
    rows = _rows(task_dir)
    assert (rows[0]["output"] == rows[0]["raw_output"]) is (postprocess == "none")
    assert rescore_task(task_dir).contradictions == []
    rows[0]["output"] = "[forged clean text]"
    _rewrite(task_dir, rows)
    found = rescore_task(task_dir).contradictions
    # The verdicts are now wrong too, but the output itself is named as not coming from its raw answer.
    assert (rows[0]["record_id"], "output") in [(c.record_id, c.field) for c in found]
    out = _invoke("rescore", str(tmp_path / "ev"), expect=1)
    assert "contradiction" in out and "post-processing of the recorded raw answer" in out
