"""End to end on privasis_sample, offline: baselines as models, --judge none and a deterministic fake judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_fakes import FakeJudgeAdapter, parse_prompt, write_templates
from typer.testing import CliRunner

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.cli import app
from privasis_bench.data.loading import load_records
from privasis_bench.results.rescore import rescore_run
from privasis_bench.tasks.registry import load_task

TASK = "privasis_sample"
BOOT = ["--bootstrap-samples", "200"]


@pytest.fixture(autouse=True)
def fake_judge_provider(monkeypatch):
    """Make ``fakejudge:x`` a provider for the run's engines; reset its call log."""
    real = runner_mod.build_adapter

    def build(spec):
        if spec.provider == "fakejudge":
            return FakeJudgeAdapter(spec.model, **spec.args)
        return real(spec)

    monkeypatch.setattr(runner_mod, "build_adapter", build)
    FakeJudgeAdapter.CALLS.clear()
    monkeypatch.setattr(FakeJudgeAdapter, "FAIL_TAG", None)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture(scope="module")
def prompts_dir(tmp_path_factory):
    return write_templates(tmp_path_factory.mktemp("prompts"))


def invoke(*args: str, expect: int = 0):
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result


def run(out: Path, model: str, judge: str, cache: Path, *extra: str, expect: int = 0) -> dict:
    invoke("run", "--model", model, "--tasks", TASK, "--judge", judge, "--output", str(out), "--cache-dir", str(cache),
           "--no-progress", *BOOT, *extra, expect=expect)
    return json.loads((out / TASK / "results.json").read_text())


def samples(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / TASK / "samples.jsonl").read_text().splitlines()]


def original_texts() -> set[str]:
    return {r.text for r in load_records(load_task(TASK)).records}


def test_judge_none_baselines(tmp_path):
    ident = run(tmp_path / "identity", "identity", "none", tmp_path / "cache")
    empty = run(tmp_path / "empty", "empty", "none", tmp_path / "cache")
    masked = run(tmp_path / "mask", "mask-targets", "none", tmp_path / "cache")
    h = lambda r: r["metrics"]["headline"]  # noqa: E731
    assert h(ident)["sanitization_record"] <= 5.0 and h(ident)["sanitization_attribute"] < 25.0
    assert h(ident)["retention_attribute_per_record"] == 100.0
    assert h(empty)["retention_attribute"] == 0.0 and h(empty)["retention_record"] == 0.0
    assert h(empty)["sanitization_attribute_per_record"] == 100.0 and h(empty)["full_successful_record"] == 0.0
    assert h(masked)["sanitization_attribute_per_record"] == 100.0
    for res in (ident, empty, masked):
        assert res["judge"]["label"] == "none (direct/verbatim only)" and res["judge"]["mode"] == "none"
        assert res["usage"].get("judge") is None and res["counts"]["excluded"] >= 1
        # records without keep attributes are excluded: never judged, never in a denominator
        c = res["counts"]
        assert c["judged_records"] == c["scored"] == c["records_loaded"] - c["excluded"] == res["metrics"]["scored_records"]
        assert res["counts"]["unjudged"] == 0 and res["complete"] is True
        assert res["metrics"]["ci"]["sanitization_attribute"]["low"] is not None
        assert res["dataset"]["ids_hash"] and res["task"]["config_hash"] and res["harness"]["version"]
    rows = samples(tmp_path / "empty")
    assert any(r["status"] == "excluded" for r in rows)
    assert all(k["via"] in ("empty_output", "null") for r in rows if r["status"] != "excluded" for k in r["keep"])


def test_fake_judge_concurrency_rerun_rescore(tmp_path, prompts_dir):
    args = ("--judge-prompts", str(prompts_dir))
    one = run(tmp_path / "c1", "mask-targets", "fakejudge:x", tmp_path / "cache1", *args, "--concurrency", "1")
    four = run(tmp_path / "c4", "mask-targets", "fakejudge:x", tmp_path / "cache4", *args, "--concurrency", "4")
    assert one["metrics"] == four["metrics"]
    strip = lambda rows: [{k: v for k, v in r.items()} for r in rows]  # noqa: E731
    assert strip(samples(tmp_path / "c1")) == strip(samples(tmp_path / "c4"))
    assert one["judge_calls"]["compare"] > 0 and one["judge_calls"]["guess_original_computed"] > 0
    assert one["judge"]["prompt_hashes"].keys() == {"guess_target", "guess_abstract", "guess_keep", "compare", "inclusion"}
    assert one["usage"]["judge"]["batches"] > 0

    # Re-running a finished run makes zero model calls and gives identical metrics.
    calls = len(FakeJudgeAdapter.CALLS)
    again = run(tmp_path / "c1", "mask-targets", "fakejudge:x", tmp_path / "cache1", *args)
    assert len(FakeJudgeAdapter.CALLS) == calls
    assert again["usage"]["judge"]["batches"] == 0 and again["usage"]["model"]["batches"] == 0
    assert again["metrics"] == one["metrics"]
    assert again["counts"]["verdicts_reused_from_checkpoint"] == again["counts"]["judged_records"]

    # Rescore reproduces the stored metrics exactly, with no model at all.
    outcome = rescore_run(tmp_path / "c1")
    assert outcome[0].matches is True
    invoke("rescore", str(tmp_path / "c1"))


def test_second_model_reuses_original_record_guesses(tmp_path, prompts_dir):
    args = ("--judge-prompts", str(prompts_dir))
    cache = tmp_path / "cache"
    run(tmp_path / "m1", "mask-targets", "fakejudge:x", cache, *args)
    originals = original_texts()
    before = len(FakeJudgeAdapter.CALLS)
    second = run(tmp_path / "m2", "mask-targets,placeholder=[GONE]", "fakejudge:x", cache, *args)
    new_calls = FakeJudgeAdapter.CALLS[before:]
    on_original = [p for p in new_calls if parse_prompt(p)[0].startswith("GUESS") and "\x1f".join(parse_prompt(p)[1][1:]) in originals]
    assert new_calls, "the second model must have been judged"
    assert on_original == []
    assert second["judge_calls"]["guess_original_computed"] == 0
    assert second["judge_calls"]["guess_original_reused"] > 0 and second["judge_calls"]["compare"] > 0


def test_failed_judge_calls_leave_records_unjudged_then_resume(tmp_path, prompts_dir):
    args = ("--judge-prompts", str(prompts_dir))
    out, cache = tmp_path / "run", tmp_path / "cache"
    FakeJudgeAdapter.FAIL_TAG = "INCLUDE"
    first = run(out, "regex-scrubber", "fakejudge:x", cache, *args, "--max-attempts", "1", expect=1)
    assert first["counts"]["unjudged"] > 0 and first["complete"] is False
    assert len(first["unjudged_records"]) == first["counts"]["unjudged"]
    assert first["metrics"]["scored_records"] == first["counts"]["judged_records"] - first["counts"]["unjudged"]
    unjudged = set(first["unjudged_records"])
    before = len(FakeJudgeAdapter.CALLS)
    FakeJudgeAdapter.FAIL_TAG = None
    second = run(out, "regex-scrubber", "fakejudge:x", cache, *args)
    assert second["counts"]["unjudged"] == 0
    assert second["counts"]["verdicts_reused_from_checkpoint"] == second["counts"]["judged_records"] - len(unjudged)
    # only the inclusion questions that failed are new calls; everything else comes from the cache
    assert {parse_prompt(p)[0] for p in FakeJudgeAdapter.CALLS[before:]} == {"INCLUDE"}


def test_evaluate_predictions_matches_run(tmp_path, prompts_dir):
    args = ("--judge-prompts", str(prompts_dir))
    ran = run(tmp_path / "run", "regex-scrubber", "fakejudge:x", tmp_path / "cache", *args)
    invoke("evaluate", "--predictions", str(tmp_path / "run" / TASK / "sanitized.jsonl"), "--tasks", TASK,
           "--judge", "fakejudge:x", "--output", str(tmp_path / "eval"), "--cache-dir", str(tmp_path / "cache"),
           "--no-progress", *BOOT, *args)
    evaluated = json.loads((tmp_path / "eval" / TASK / "results.json").read_text())
    assert evaluated["metrics"] == ran["metrics"]
    assert evaluated["usage"]["judge"]["batches"] == 0  # everything judged already (response cache)
    invoke("compare", str(tmp_path / "run"), str(tmp_path / "eval"), "--json", str(tmp_path / "cmp.json"))
    cmp = json.loads((tmp_path / "cmp.json").read_text())["tasks"][TASK]
    assert cmp["common_records"] == ran["metrics"]["scored_records"]
    assert all(row["diff"] == 0 for row in cmp["metrics"].values())


def test_strict_mode_and_instruction_recorded(tmp_path, prompts_dir):
    res = run(tmp_path / "s", "mask-targets", "fakejudge:x", tmp_path / "cache", "--judge-prompts", str(prompts_dir),
              "--parse-mode", "strict", "--instruction", "smoothed", "--limit", "5")
    assert res["parse_mode"] == "strict" and res["judge"]["parse_mode"] == "strict"
    assert res["instruction"] == "smoothed" and res["counts"]["records_loaded"] == 5


def test_evaluate_reference_format_predictions_judge_none(tmp_path):
    ran = run(tmp_path / "run", "identity", "none", tmp_path / "cache")
    rows = [json.loads(x) for x in (tmp_path / "run" / TASK / "sanitized.jsonl").read_text().splitlines()]
    preds = tmp_path / "preds.jsonl"
    # the reference evaluator's format, one record missing: left out of the scores (never scored silently), reported
    preds.write_text("".join(json.dumps({"id": r["id"], "model_sanitized_text": r["output"]}) + "\n" for r in rows[1:]))
    result = invoke("judge", "--predictions", str(preds), "--tasks", TASK, "--judge", "none", "--output", str(tmp_path / "ev"),
                    "--no-progress", *BOOT, expect=1)  # a missing prediction makes the results incomplete
    assert "left out of the scores" in result.output
    res = json.loads((tmp_path / "ev" / TASK / "results.json").read_text())
    assert res["complete"] is False
    assert res["counts"]["missing_predictions"] == 1 and res["missing_prediction_records"] == [rows[0]["id"]]
    assert res["counts"]["failed_outputs"] == 0
    assert res["model"]["predictions"]["format"] == "reference"
    assert res["metrics"]["scored_records"] == ran["metrics"]["scored_records"] - 1
    # asked for: scored as an empty output, and marked as such
    invoke("judge", "--predictions", str(preds), "--tasks", TASK, "--judge", "none", "--output", str(tmp_path / "ev2"),
           "--no-progress", *BOOT, "--score-missing-as-empty")
    res = json.loads((tmp_path / "ev2" / TASK / "results.json").read_text())
    assert res["metrics"]["scored_records"] == ran["metrics"]["scored_records"]
    assert res["model"]["predictions"]["missing_policy"] == "empty" and res["counts"]["empty_outputs"] == 1
    assert res["metrics"]["headline"]["retention_record"] < ran["metrics"]["headline"]["retention_record"]


def test_rescore_names_each_number_that_differs(tmp_path):
    run(tmp_path / "r", "identity", "none", tmp_path / "cache")
    path = tmp_path / "r" / TASK / "results.json"
    results = json.loads(path.read_text())
    stored = results["metrics"]["headline"]["retention_attribute"]
    results["metrics"]["headline"]["retention_attribute"] = 12.5
    results["metrics"]["ci"]["full_successful_record"]["high"] = 99.0
    path.write_text(json.dumps(results))
    out = invoke("rescore", str(tmp_path / "r"), expect=1).output
    assert f"metrics.headline.retention_attribute: stored 12.5, recomputed {stored}" in out
    assert "metrics.ci.full_successful_record.high: stored 99.0, recomputed" in out
