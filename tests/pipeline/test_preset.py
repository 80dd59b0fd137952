"""``--preset paper``: one recorded switch for every comparability setting (issue 35.1), with a deterministic judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_fakes import FakeJudgeAdapter, parse_prompt, write_templates
from typer.testing import CliRunner

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.cli import app
from privasis_bench.leaderboard.provenance import submission_record
from privasis_bench.protocol.presets import PAPER, preset_problems
from privasis_bench.results.rescore import rescore_run

TASK = "privasis_sample"
BOOT = ["--bootstrap-samples", "50", "--limit", "6"]


@pytest.fixture(autouse=True)
def fake_judge_provider(monkeypatch):
    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: FakeJudgeAdapter(spec.model, **spec.args) if spec.provider == "fakejudge" else real(spec))
    FakeJudgeAdapter.CALLS.clear()
    monkeypatch.setattr(FakeJudgeAdapter, "FAIL_TAG", None)


@pytest.fixture(scope="module")
def prompts_dir(tmp_path_factory):
    return write_templates(tmp_path_factory.mktemp("prompts"))


def invoke(*args: str, expect: int = 0) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result.output


def run(out: Path, model: str, prompts: Path, *extra: str, expect: int = 0) -> dict:
    invoke("run", "--model", model, "--tasks", TASK, "--judge", "fakejudge:x", "--judge-prompts", str(prompts),
           "--output", str(out), "--cache-dir", str(out.parent / "cache"), "--no-progress", *BOOT, *extra, expect=expect)
    return json.loads((out / TASK / "results.json").read_text())


def test_preset_paper_sets_and_records_every_setting(tmp_path, prompts_dir):
    res = run(tmp_path / "paper", "empty", prompts_dir, "--preset", "paper")
    assert res["scoring_preset"] == "paper"
    assert res["judge"]["empty_outputs"] == "judge" and res["judge"]["inclusion_text"] == "raw"
    assert res["parse_mode"] == "official" and res["instruction"] == "base"
    assert res["answer_policy"]["judge"]["empty"] == res["answer_policy"]["judge"]["truncated"] == "accept"
    assert res["answer_policy"]["model"]["empty"] == res["answer_policy"]["model"]["truncated"] == "accept"
    assert (res["judge"]["guess_max_tokens"], res["judge"]["compare_max_tokens"], res["judge"]["temperature"]) == (512, 4096, 0.0)
    assert res["model"]["generation"] == {"max_tokens": 9024, "temperature": 0.0}
    assert preset_problems(res) == []
    # the empty outputs were shown to the judge: questions about "" were asked
    about_empty = [p for p in FakeJudgeAdapter.CALLS if parse_prompt(p)[0].startswith("GUESS") and parse_prompt(p)[1][1] == ""]
    assert about_empty and res["judge_calls"]["inclusion"] > 0
    assert all(k["via"] != "empty_output" for r in _rows(tmp_path / "paper") if r["status"] == "judged" for k in r["keep"])
    # rescore re-derives every verdict with the recorded rule, and the submission carries the preset
    assert [o.matches for o in rescore_run(tmp_path / "paper")] == [True]
    assert not rescore_run(tmp_path / "paper")[0].contradictions
    sub = submission_record(res, name="a/b", track="verified", reference=False, label=None, files={}, records=6,
                            task_hash="0" * 64)
    assert sub["scoring_preset"] == "paper"


def test_default_run_keeps_the_harness_rules_and_records_no_preset(tmp_path, prompts_dir):
    res = run(tmp_path / "default", "empty", prompts_dir)
    assert res["scoring_preset"] is None
    assert res["judge"]["empty_outputs"] == "skip" and res["judge"]["inclusion_text"] == "after-think"
    # the harness default asks again on empty judge answers; the sample task's own answer_policy tolerates cut ones
    assert res["answer_policy"]["judge"] == {"empty": "retry", "truncated": "accept", "max_attempts": 3}
    assert "judge_truncated_answers" in res["checks"]["tolerated_by_task"]
    assert FakeJudgeAdapter.CALLS == []  # empty outputs: nothing asked
    assert res["metrics"]["headline"]["retention_attribute"] == 0.0


def test_the_two_rules_are_also_options_of_their_own(tmp_path, prompts_dir):
    res = run(tmp_path / "rules", "empty", prompts_dir, "--empty-outputs", "judge", "--inclusion-text", "raw")
    assert res["scoring_preset"] is None and res["judge"]["empty_outputs"] == "judge"
    assert FakeJudgeAdapter.CALLS


@pytest.mark.parametrize("extra, option", [
    (("--empty-outputs", "skip"), "--empty-outputs"),
    (("--inclusion-text", "after-think"), "--inclusion-text"),
    (("--empty-answers", "retry"), "--empty-answers"),
    (("--judge-truncated-answers", "retry"), "--judge-truncated-answers"),
    (("--parse-mode", "strict"), "--parse-mode"),
    (("--instruction", "smoothed"), "--instruction"),
    (("--max-tokens", "100"), "--max-tokens"),
    (("--judge-guess-max-tokens", "64"), "--judge-guess-max-tokens"),
])
def test_an_explicit_option_that_contradicts_the_preset_is_refused(tmp_path, prompts_dir, extra, option,
                                                                   monkeypatch, capsys):
    from cli_main import run_main

    code, out, err = run_main(["run", "-m", "empty", "-t", TASK, "--judge", "fakejudge:x", "-o", str(tmp_path / "x"),
                               "--no-progress", "--preset", "paper", *extra], monkeypatch, capsys)
    assert code == 2
    assert option in err + out and "--preset paper" in err + out


@pytest.mark.parametrize("command", ["run", "evaluate"])
def test_the_preset_without_a_judge_is_refused(tmp_path, command, monkeypatch, capsys):
    # issue 41: the paper's scoring asks a judge; --judge none cannot be recorded as the preset
    from cli_main import run_main

    source = ["-m", "empty"] if command == "run" else ["-p", str(tmp_path / "preds.jsonl")]
    code, out, err = run_main([command, *source, "-t", TASK, "--judge", "none", "-o", str(tmp_path / "x"),
                               "--no-progress", "--preset", "paper"], monkeypatch, capsys)
    assert code == 2 and "--preset paper needs a judge model" in err + out and "--judge none" in err + out
    assert len((err + out).strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_an_agreeing_explicit_option_and_an_unknown_preset(tmp_path, prompts_dir, monkeypatch, capsys):
    res = run(tmp_path / "ok", "empty", prompts_dir, "--preset", "paper", "--empty-answers", "accept",
              "--inclusion-text", "raw")
    assert res["scoring_preset"] == "paper"
    from cli_main import run_main

    code, out, err = run_main(["run", "-m", "empty", "-t", TASK, "--judge", "none", "-o", str(tmp_path / "y"),
                               "--preset", "papers"], monkeypatch, capsys)
    assert code == 2 and "--preset must be one of paper" in err + out


def test_evaluate_with_the_preset_puts_the_raw_text_into_the_inclusion_question(tmp_path, prompts_dir):
    preds = tmp_path / "preds.jsonl"
    from privasis_bench.data.loading import load_records
    from privasis_bench.tasks.registry import load_task

    records = load_records(load_task(TASK), limit=6).scored
    preds.write_text("".join(json.dumps({"id": r.id, "model_sanitized_text": "thinking</think>A rewritten letter."}) + "\n"
                             for r in records))
    invoke("evaluate", "-p", str(preds), "-t", TASK, "--judge", "fakejudge:x", "--judge-prompts", str(prompts_dir),
           "-o", str(tmp_path / "ev"), "--cache-dir", str(tmp_path / "cache"), "--no-progress", *BOOT, "--preset", "paper")
    res = json.loads((tmp_path / "ev" / TASK / "results.json").read_text())
    assert res["scoring_preset"] == "paper" and preset_problems(res) == []
    included = [parse_prompt(p)[1][0] for p in FakeJudgeAdapter.CALLS if parse_prompt(p)[0] == "INCLUDE"]
    assert included and set(included) == {"thinking</think>A rewritten letter."}
    guessed = {parse_prompt(p)[1][1] for p in FakeJudgeAdapter.CALLS if parse_prompt(p)[0] == "GUESS_KEEP"}
    assert guessed == {"A rewritten letter."}


def test_a_results_file_claiming_the_preset_must_hold_its_settings(tmp_path, prompts_dir):
    res = run(tmp_path / "paper", "identity", prompts_dir, "--preset", "paper")
    path = tmp_path / "paper" / TASK / "results.json"
    res["judge"]["inclusion_text"] = "after-think"
    res["answer_policy"]["judge"]["empty"] = "retry"
    path.write_text(json.dumps(res))
    problems = preset_problems(res)
    assert len(problems) == 2 and any("judge.inclusion_text" in p and "--inclusion-text" in p for p in problems)
    out = invoke("rescore", str(tmp_path / "paper"), expect=1)
    assert "scoring_preset paper requires" in out
    # only the preset record differs: the metrics are said to match, the settings are named apart (issue 42)
    assert "recomputed metrics match results.json" in " ".join(out.split()) and "DIFFER" not in out
    assert "claims scoring_preset paper but records other settings" in " ".join(out.split())
    assert {s.option for s in PAPER} >= {"--empty-outputs", "--inclusion-text", "--parse-mode", "--instruction",
                                         "--empty-answers", "--judge-truncated-answers", "--judge-guess-max-tokens",
                                         "--judge-compare-max-tokens", "--max-tokens", "--temperature"}


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / TASK / "samples.jsonl").read_text().splitlines()]
