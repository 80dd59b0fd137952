"""A real ``lm_eval`` run of the shipped privasis tasks against llama.cpp's server (xllamacpp), then import and judge.

lm-eval runs in a subprocess from a scratch directory (the task files must not depend on the CWD),
with ``--limit 3`` and a small ``max_gen_toks`` so the run takes a minute or two on 2 cores.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:  # works whether or not tests/ is a package
    from . import conftest as shared
except ImportError:
    import conftest as shared  # type: ignore[no-redef]

from privasis_bench.data.loading import load_records
from privasis_bench.interop.lmeval import lmeval_tasks_dir, sample_messages
from privasis_bench.pipeline.predictions import MISSING_ERROR, load_predictions
from privasis_bench.protocol.testee import build_sanitize_request, postprocess_output
from privasis_bench.tasks.registry import load_task

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LIMIT = 3
MAX_GEN_TOKS = 64
LMEVAL_TIMEOUT_S = 900


def _lm_eval_argv() -> list[str]:
    script = Path(sys.executable).parent / "lm_eval"
    return [str(script)] if script.exists() else [sys.executable, "-m", "lm_eval"]


@pytest.fixture(scope="module")
def lmeval_run(llama_server_url: str, tmp_path_factory: pytest.TempPathFactory, hf_home: Path) -> dict:
    """Run lm_eval once; return the samples file, its parsed rows and the run directory."""
    shared.require_module("lm_eval", "pip install 'lm-eval[api]'")
    run_dir = tmp_path_factory.mktemp("lmeval_run")
    out_dir = run_dir / "out"
    argv = [
        *_lm_eval_argv(),
        "--include_path", str(lmeval_tasks_dir()),
        "--tasks", "privasis_sample",
        "--model", "local-chat-completions",
        "--model_args", f"model=smollm2,base_url={llama_server_url}/chat/completions,num_concurrent=1,max_retries=2,timeout=600",
        "--apply_chat_template",
        "--limit", str(LIMIT),
        "--gen_kwargs", f"max_gen_toks={MAX_GEN_TOKS}",
        "--log_samples",
        "--output_path", str(out_dir),
    ]
    env = shared.offline_env(hf_home)
    env["OPENAI_API_KEY"] = "unused-local"  # lm-eval's API backends read it; the local server ignores it
    proc = subprocess.run(argv, cwd=run_dir, env=env, capture_output=True, text=True, timeout=LMEVAL_TIMEOUT_S)
    assert proc.returncode == 0, f"lm_eval failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
    samples = sorted(out_dir.rglob("samples_privasis_sample_*.jsonl"))
    assert len(samples) == 1, f"expected one samples file under {out_dir}, found {samples}\n{proc.stderr[-3000:]}"
    rows = [json.loads(line) for line in samples[0].read_text(encoding="utf-8").splitlines() if line.strip()]
    return {"samples": samples[0], "rows": rows, "dir": run_dir}


def test_lmeval_samples_import_with_our_prompts(lmeval_run: dict) -> None:
    task = load_task("privasis_sample")
    loaded = load_records(task)
    rows = lmeval_run["rows"]
    assert len(rows) == LIMIT
    # The lm-eval documents are the scored records, in dataset order.
    expected_ids = [r.id for r in loaded.scored[:LIMIT]]
    assert [row["doc"]["id"] for row in sorted(rows, key=lambda r: r["doc_id"])] == expected_ids

    by_id = {r.id: r for r in loaded.records}
    for row in rows:
        record = by_id[row["doc"]["id"]]
        ours = build_sanitize_request(record, task)
        # lm-eval sent exactly our request: one user message, no system prompt, identical text.
        assert sample_messages(row) == ours.as_openai_messages()
        assert row["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == MAX_GEN_TOKS

    preds = load_predictions(lmeval_run["samples"], loaded.records, task=task)
    report = preds.report
    assert report.format == "lmeval"
    assert report.matched == LIMIT and report.unknown == [] and report.prompt_mismatch == []
    assert sorted(report.missing) == sorted(r.id for r in loaded.scored if r.id not in expected_ids)
    for row in rows:
        out = preds[row["doc"]["id"]]
        raw = row["resps"][0][0]
        assert out.raw_output == raw and isinstance(raw, str)
        assert out.output == postprocess_output(raw, task.prompt.answer_cue)
        assert out.error is None
        assert out.prompt_hash == build_sanitize_request(by_id[out.id], task).prompt_hash()
        assert out.model == "lm-eval:local-chat-completions:smollm2"
    assert report.missing  # --limit 3: the other scored records are missing, left out by default and listed
    assert report.missing_policy == "leave_out" and all(rid not in preds for rid in report.missing)
    # Asked to, the loader turns them into failed outputs (never empty successes, never the reference text).
    failed = load_predictions(lmeval_run["samples"], loaded.records, task=task, missing="failed")
    for rid in report.missing:
        assert failed[rid].output is None and failed[rid].error == MISSING_ERROR


def _privasis_bench_argv() -> list[str]:
    script = Path(sys.executable).parent / "privasis-bench"
    if script.exists():
        return [str(script)]
    found = shutil.which("privasis-bench")
    return [found] if found else [sys.executable, "-m", "privasis_bench"]


def test_evaluate_scores_lmeval_samples(lmeval_run: dict, hf_home: Path) -> None:
    """`privasis-bench evaluate` judges the real lm-eval samples file (judge none: direct checks only)."""
    out_dir = lmeval_run["dir"] / "judged"
    argv = [*_privasis_bench_argv(), "evaluate", "--tasks", "privasis_sample", "--predictions", str(lmeval_run["samples"]),
            "--judge", "none", "--output", str(out_dir)]
    proc = subprocess.run(argv, cwd=lmeval_run["dir"], env=shared.offline_env(hf_home), capture_output=True, text=True,
                          timeout=600)
    # Records lm-eval did not generate (--limit) are left out of the scores and reported: the results are written
    # but marked incomplete (exit 1).
    assert proc.returncode == 1, f"evaluate failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    results = json.loads((out_dir / "privasis_sample" / "results.json").read_text(encoding="utf-8"))
    assert results["complete"] is False
    loaded = load_records(load_task("privasis_sample"))
    n_scored = len(loaded.scored)
    imported = results["model"]["predictions"]
    assert imported["format"] == "lmeval" and imported["matched"] == LIMIT and imported["missing_policy"] == "leave_out"
    assert imported["missing"] == n_scored - LIMIT and imported["prompt_mismatch"] == 0
    assert results["model"]["label"] == "lm-eval:local-chat-completions:smollm2"
    counts = results["counts"]
    assert counts["scored"] == LIMIT and counts["judged_records"] == LIMIT
    assert counts["missing_predictions"] == n_scored - LIMIT and counts["failed_outputs"] == 0
    assert sorted(results["missing_prediction_records"]) == sorted(imported["missing_ids"])
    assert "left out of the scores" in " ".join((proc.stderr + proc.stdout).split())
    assert "no prediction" in proc.stderr + proc.stdout
