"""``privasis-bench run`` end to end with the real in-process llama.cpp SmolLM2 as model and judge.

Kept small (2 records, short budgets) so it finishes in a few minutes on 2 CPU cores.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.results.rescore import rescore_run

pytestmark = pytest.mark.integration

TASK = "privasis_sample"
# SmolLM2 is a plumbing model: with these tiny budgets its outputs are cut off and its judge answers are rarely
# clean labels, so both are accepted explicitly (by default they fail the run).
SMALL = ["--limit", "2", "--max-tokens", "96", "--judge-guess-max-tokens", "24", "--judge-compare-max-tokens", "8",
         "--bootstrap-samples", "100", "--no-progress", "--concurrency", "2", "--truncated-answers", "accept",
         "--judge-truncated-answers", "accept", "--max-off-label", "1000"]


def _run(out, model, cache, expect=(0,)):
    result = CliRunner().invoke(
        app, ["run", "--model", model, "--tasks", TASK, "--judge", "llamacpp:smollm2", "--output", str(out),
              "--cache-dir", str(cache), *SMALL], catch_exceptions=False,
    )
    assert result.exit_code in expect, result.output
    return json.loads((out / TASK / "results.json").read_text())


def test_smollm2_model_and_judge(tmp_path, in_process_smollm2):
    cache = tmp_path / "cache"
    res = _run(tmp_path / "smol", "llamacpp:smollm2", cache)
    assert res["judge"]["label"] == "llamacpp:smollm2" and res["judge"]["mode"] == "model"
    assert res["counts"]["records_loaded"] == 2 and res["counts"]["unjudged"] == 0
    assert res["usage"]["judge"]["batches"] > 0 and res["usage"]["model"]["batches"] > 0
    for value in res["metrics"]["headline"].values():
        assert value is None or 0.0 <= value <= 100.0
    rows = [json.loads(x) for x in (tmp_path / "smol" / TASK / "samples.jsonl").read_text().splitlines()]
    judged = [r for r in rows if r["status"] != "excluded"]
    assert judged and all("targets" in r and "keep" in r and "output" in r for r in judged)
    assert rescore_run(tmp_path / "smol")[0].matches is True

    # a re-run of the finished run calls no model
    again = _run(tmp_path / "smol", "llamacpp:smollm2", cache)
    assert again["usage"]["model"]["batches"] == 0 and again["usage"]["judge"]["batches"] == 0
    assert again["metrics"] == res["metrics"]

    # identity: nearly everything leaks verbatim
    ident = _run(tmp_path / "identity", "identity", cache)
    assert ident["metrics"]["headline"]["sanitization_record"] == 0.0
