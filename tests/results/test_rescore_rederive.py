"""``rescore`` re-derives verdicts and ``--write`` refuses to launder contradictions (issue 16.5)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.results.files import ResultsError
from privasis_bench.results.rescore import rescore_run


def _run(out):
    result = CliRunner().invoke(app, ["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none", "-o", str(out),
                                      "--no-cache", "--no-progress", "--bootstrap-samples", "50"])
    assert result.exit_code == 0, result.output
    return out / "privasis_sample"


def test_rescore_flags_and_write_refuses(tmp_path):
    task_dir = _run(tmp_path / "run")
    assert rescore_run(task_dir)[0].contradictions == []
    path = task_dir / "samples.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    victim = next(r for r in rows if r.get("status") == "judged")
    victim["keep"][0]["retained"] = False  # the value is in the identity output verbatim
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = (task_dir / "results.json").read_text()
    found = rescore_run(task_dir)[0].contradictions
    assert [(c.record_id, c.attribute, c.field) for c in found] == [(victim["record_id"], f"keep:{victim['keep'][0]['name']}", "retained")]
    result = CliRunner().invoke(app, ["rescore", str(task_dir)])
    assert result.exit_code == 1 and "contradiction: record " + victim["record_id"] in result.output
    with pytest.raises(ResultsError, match="refusing to write"):
        rescore_run(task_dir, write=True)
    assert (task_dir / "results.json").read_text() == before
