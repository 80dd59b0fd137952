"""Every Eval Ever records: judge metadata with the real prompt, finite intervals, sidecar checksums, the evaluator's
relationship; validated and read back with the every-eval-ever package itself (its own Python 3.12 venv)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_main import run_main

from privasis_bench.results.eee import ForeignPrompt, eee_record, llm_scoring, write_record
from privasis_bench.results.export import ExportError, find_task_runs
from privasis_bench.tasks.paths import builtin_tasks_dir

ROOT = Path(__file__).resolve().parents[2]
PRESIDIO = ROOT / "submissions" / "microsoft__presidio-synthetic"
EEE_ARGS = ["--evaluator-relationship", "third_party", "--organization", "privasis-bench maintainers",
            "--model-id", "microsoft/presidio-synthetic"]


def _eee_python() -> Path | None:
    for candidate in (os.environ.get("PRIVASIS_EEE_PYTHON"), ROOT / ".venv-eee" / "bin" / "python"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def _records():
    return {run.task: eee_record(run, relationship="third_party", organization="org", model_id="microsoft/presidio",
                                 retrieved=1_700_000_000) for run in find_task_runs(PRESIDIO)}


def test_judged_metrics_carry_the_judge_and_its_real_prompt():
    record = _records()["privasis_sample"]
    scoring = record.aggregate["evaluation_results"][0]["metric_config"]["llm_scoring"]
    assert scoring["judges"][0]["model_info"]["id"] == "llamacpp/smollm2"
    prompt_dir = builtin_tasks_dir() / "prompts"
    for name in ("judge_guess_target", "judge_compare", "judge_inclusion"):
        assert (prompt_dir / f"{name}.txt").read_text(encoding="utf-8").strip() in scoring["input_prompt"]
    assert "llm_scoring" not in _records()["tab_sample"].aggregate["evaluation_results"][0]["metric_config"]


def test_intervals_relationship_and_sidecar_checksum(tmp_path):
    record = _records()["tab_replacement_sample"]
    agg = record.aggregate
    assert agg["source_metadata"]["evaluator_relationship"] == "third_party"
    trir = next(r for r in agg["evaluation_results"] if r["evaluation_result_id"].endswith("/trir"))
    assert trir["metric_config"]["lower_is_better"] is True
    ci = trir["score_details"]["uncertainty"]["confidence_interval"]
    assert ci["lower"] <= trir["score_details"]["score"] <= ci["upper"]
    write_record(record, tmp_path)
    body = (tmp_path / record.instances_path).read_bytes()
    assert hashlib.sha256(body).hexdigest() == agg["detailed_evaluation_results"]["checksum"]
    assert agg["detailed_evaluation_results"]["total_rows"] == len(body.splitlines()) == 10


def _run(task: str, entry: Path = PRESIDIO):
    return next(run for run in find_task_runs(entry) if run.task == task)


def test_a_judge_template_that_is_not_the_recorded_one_is_refused():
    run = _run("privasis_sample")
    run.results["judge"]["prompt_hashes"]["compare"] = "0" * 64
    with pytest.raises(ExportError, match="judge template compare: .* is not the text the run used"):
        eee_record(run, relationship="third_party", organization="org", retrieved=1)


def test_spia_metrics_carry_the_adversary_and_the_matcher_with_their_prompts():
    scoring = llm_scoring(_run("spia_sample"))
    assert [j["model_info"]["id"] for j in scoring["judges"]] == ["llamacpp/smollm2", "llamacpp/smollm2"]
    assert [j["temperature"] for j in scoring["judges"]] == [0.1, 0.0]  # SPIA's adversary samples; the matcher not
    prompt_dir = builtin_tasks_dir() / "spia" / "prompts"
    for role, name in (("adversary", "subjects"), ("adversary", "profile_codes"), ("matcher", "match")):
        text = (prompt_dir / f"{name}.txt").read_text(encoding="utf-8").strip()
        assert f"### {role}: {name}\n{text}" in scoring["input_prompt"]
    assert set(scoring["additional_details"]) == {"adversary_answer_grammar", "adversary_prompt_hashes",
                                                  "matcher_answer_grammar", "matcher_prompt_hashes"}


def test_a_spia_run_with_a_template_of_its_own_is_refused():
    run = _run("spia_sample")
    run.results["scorer"]["templates"]["match"] = "1" * 64
    with pytest.raises(ExportError, match="matcher template match: .* is not the text the run used"):
        llm_scoring(run)


def test_the_board_reads_only_shipped_prompts(tmp_path):
    run = _run("privasis_sample")
    judge = run.results["judge"]
    own = tmp_path / "compare.txt"  # the very text, but a file of the run's own
    own.write_text((builtin_tasks_dir() / "prompts" / "judge_compare.txt").read_text(encoding="utf-8"), encoding="utf-8")
    judge["prompt_sources"]["compare"] = str(own)
    assert "judge: compare" in llm_scoring(run)["input_prompt"]  # an export of one's own run may read it
    with pytest.raises(ForeignPrompt, match="judge template compare: .* is not a shipped template"):
        llm_scoring(run, shipped_prompts_only=True)


def test_the_relationship_and_organization_are_required(tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["export", str(PRESIDIO), "-f", "eee", "-o", str(tmp_path)], monkeypatch, capsys)
    assert code == 2 and "--evaluator-relationship" in err
    code, _, err = run_main(["export", str(PRESIDIO), "-f", "eee", "-o", str(tmp_path), *EEE_ARGS[:2],
                             "--organization", "x", "--model-availability", "maybe"], monkeypatch, capsys)
    assert code == 2 and "--model-availability 'maybe'" in err


@pytest.mark.slow
def test_every_eval_ever_validates_and_reads_back_the_files(tmp_path, monkeypatch, capsys):
    python = _eee_python()
    if python is None:
        if os.environ.get("CI"):
            pytest.fail(".venv-eee is missing: .ci/install-test-deps makes it with python3.12")
        pytest.skip("no Python with every-eval-ever (.venv-eee or PRIVASIS_EEE_PYTHON)")
    code, out, err = run_main(["export", str(PRESIDIO), "-f", "eee", "-o", str(tmp_path), *EEE_ARGS,
                               "--eee-python", str(python)], monkeypatch, capsys)
    assert code == 0, err
    assert "8 file(s) valid, read back, sidecar checksums match" in out  # four families: an aggregate and a sidecar each
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    checker = ROOT / "privasis_bench" / "results" / "eee_check.py"
    checked = json.loads(subprocess.run([str(python), str(checker), str(tmp_path), *files], capture_output=True,
                                        text=True, check=True).stdout)
    (privasis,) = [a for a in checked["aggregates"].values() if "privasis_sample" in a["evaluation_id"]]
    results = json.loads((PRESIDIO / "privasis_sample" / "results.json").read_text(encoding="utf-8"))["metrics"]
    fsr = privasis["results"]["privasis_sample/retention_attribute"]
    assert (fsr["score"], fsr["lower"], fsr["upper"]) == (
        results["headline"]["retention_attribute"], results["ci"]["retention_attribute"]["low"],
        results["ci"]["retention_attribute"]["high"])
    assert fsr["judges"] == ["llamacpp/smollm2"] and fsr["judge_prompt_chars"] > 500
    (spia,) = [a for a in checked["aggregates"].values() if "spia_sample" in a["evaluation_id"]]
    cpr = spia["results"]["spia_sample/cpr"]  # SPIA's adversary and matcher, as EEE's own package reads them
    assert cpr["judges"] == ["llamacpp/smollm2", "llamacpp/smollm2"] and cpr["judge_prompt_chars"] > 1000
    # a corrupted record (a NaN bound) is refused by the package's own validator
    aggregate = next(tmp_path.rglob("*.json"))
    data = json.loads(aggregate.read_text(encoding="utf-8"))
    data["evaluation_results"][0]["score_details"]["uncertainty"]["confidence_interval"]["upper"] = float("nan")
    aggregate.write_text(json.dumps(data), encoding="utf-8")
    report = json.loads(subprocess.run([str(python), str(checker), str(tmp_path), aggregate.relative_to(tmp_path).as_posix()],
                                       capture_output=True, text=True).stdout or "{}").get("report", [{}])
    assert report and report[0].get("valid") is False


def test_the_eee_block_runs_with_the_seeded_entry(tmp_path, monkeypatch, capsys):
    import shlex

    from docs_examples.test_doc_examples import block_commands

    monkeypatch.chdir(tmp_path)
    (command,) = block_commands("docs/publishing-elsewhere.md",
                                "privasis-bench export -f eee -o eee submissions/HuggingFaceTB__SmolLM2-135M-Instruct/privasis_sample")
    argv = shlex.split(command.replace("submissions/", f"{ROOT}/submissions/"))[1:]
    python = _eee_python()
    code, out, err = run_main(argv + (["--eee-python", str(python)] if python else []), monkeypatch, capsys)
    assert code == 0, err
    assert len(list((tmp_path / "eee" / "data").rglob("*.json"))) == 1
    assert ("2 file(s) valid" in out) if python else ("not validated" in out)
