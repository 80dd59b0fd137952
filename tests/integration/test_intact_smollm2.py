"""``run -m intact:llamacpp:smollm2`` end to end with the real in-process llama.cpp SmolLM2 as sanitizer and attacker.

SmolLM2-135M is a plumbing model: the test checks that every step really runs through the model (targets, spans,
candidate levels, attacks), that the results name the wrapped model and count its sub-calls' tokens, and that
the records are scored, not how well it sanitizes. A recipe with small budgets, few targets and few levels keeps
it to a few minutes on 2 CPU cores.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.recipes.config import recipes_dir
from privasis_bench.results.rescore import rescore_run

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TASK = "privasis_sample"
#: One record: each costs about half a minute of SmolLM2 sub-calls on 2 cores.
LIMIT = 1
RECIPE = """\
include: {base}
recipe: intact_smoke
generation:
  targets: {{temperature: 0.0, max_tokens: 64}}
  spans: {{temperature: 0.0, max_tokens: 32}}
  candidates: {{temperature: 0.0, max_tokens: 40}}
  attack: {{temperature: 0.0, max_tokens: 24}}
corpus:
  chunk_chars: 1024
  max_targets: 3
"""


def test_run_intact_smollm2_scores_records(tmp_path, in_process_smollm2):
    recipe = tmp_path / "intact_smoke.yaml"
    recipe.write_text(RECIPE.format(base=recipes_dir() / "intact.yaml"), encoding="utf-8")
    model = f"intact:llamacpp:smollm2,recipe={recipe},levels=3,guesses=2,max_spans=1"
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "-m", model, "-t", TASK, "--limit", str(LIMIT), "--judge", "none", "-o", str(out),
                                      "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--concurrency", "2",
                                      "--bootstrap-samples", "50"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    res = json.loads((out / TASK / "results.json").read_text())
    assert res["model"]["spec"]["provider"] == "intact" and res["model"]["spec"]["model"] == "llamacpp:smollm2"
    assert res["model"]["rankable"] is True
    counts = res["counts"]
    assert counts["records_loaded"] == LIMIT and counts["scored"] == LIMIT and counts["unjudged"] == 0
    usage = res["usage"]["model"]
    # one outer request per record, each the sum of many sub-calls: far more tokens than one SmolLM2 answer could hold
    assert usage["requests"] == LIMIT and usage["failed"] == 0
    assert usage["prompt_tokens"] > LIMIT * 1000 and usage["completion_tokens"] > LIMIT * 64
    for value in res["metrics"]["headline"].values():
        assert value is None or 0.0 <= value <= 100.0
    rows = [json.loads(x) for x in (out / TASK / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == LIMIT and all(r["status"] == "judged" and r["output"].strip() for r in rows)
    originals = {json.loads(x)["id"]: json.loads(x)["original_record"]
                 for x in (recipes_dir().parent / "sample" / "privasis_sample.jsonl").read_text().splitlines()}
    assert all(r["output"] != originals[r["record_id"]] for r in rows), "intact changed nothing at all"
    assert all(r.matches for r in rescore_run(out))
