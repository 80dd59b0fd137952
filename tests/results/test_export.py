"""``privasis-bench export``: flat tables and Hub eval-results files from finished runs (the committed entries)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import yaml
from cli_main import run_main

from privasis_bench.results.export import find_task_runs, metric_values

ROOT = Path(__file__).resolve().parents[2]
PRESIDIO = ROOT / "submissions" / "microsoft__presidio-synthetic"  # one entry on all four families
SMOLLM2 = ROOT / "submissions" / "HuggingFaceTB__SmolLM2-135M-Instruct"  # a Privasis and a SPIA entry
SMOLLM2_PRIVASIS = SMOLLM2 / "privasis_sample"
LOCAL = ["--dataset-id", "privasis_sample=nvidia/Privasis-Zero",
         "--dataset-id", "tab_sample=NorskRegnesentral/text-anonymization-benchmark",
         "--dataset-id", "tab_replacement_sample=NorskRegnesentral/text-anonymization-benchmark",
         "--dataset-id", "spia_sample=maisonOP/spia"]


def _results(task_dir: Path) -> dict:
    return json.loads((task_dir / "results.json").read_text(encoding="utf-8"))


def test_csv_has_one_row_per_task_and_metric_with_the_files_numbers(tmp_path, monkeypatch, capsys):
    code, out, err = run_main(["export", str(PRESIDIO), "-o", str(tmp_path), "--records"], monkeypatch, capsys)
    assert code == 0, err
    rows = list(csv.DictReader((tmp_path / "metrics.csv").open(encoding="utf-8")))
    assert {r["family"] for r in rows} == {"privasis", "tab", "tab_replacement", "spia"}
    cpr = next(r for r in rows if r["task"] == "spia_sample" and r["metric"] == "cpr")
    assert float(cpr["value"]) == _results(PRESIDIO / "spia_sample")["metrics"]["cpr"]
    assert cpr["judge"] == "adversary=llamacpp:smollm2, matcher=llamacpp:smollm2"  # the roles that graded it
    fsr = next(r for r in rows if r["task"] == "privasis_sample" and r["metric"] == "full_successful_record")
    assert float(fsr["value"]) == _results(PRESIDIO / "privasis_sample")["metrics"]["headline"]["full_successful_record"]
    recall = next(r for r in rows if r["task"] == "tab_sample" and r["metric"] == "token_recall")
    tab = _results(PRESIDIO / "tab_sample")["metrics"]
    assert (float(recall["value"]), float(recall["ci_low"]), float(recall["ci_high"])) == (
        tab["token_recall"], tab["ci"]["token_recall"]["low"], tab["ci"]["token_recall"]["high"])
    assert not any(r["metric"] in ("documents", "scored_documents", "top_failed_limit") for r in rows)  # counts
    records = list(csv.DictReader((tmp_path / "records.csv").open(encoding="utf-8")))
    expected = sum(len((d / "samples.jsonl").read_text(encoding="utf-8").splitlines()) for d in PRESIDIO.iterdir()
                   if d.is_dir())
    assert len(records) == expected


def test_jsonl_rows_load_in_pandas(tmp_path, monkeypatch, capsys):
    pandas = pytest.importorskip("pandas")
    assert run_main(["export", str(SMOLLM2), "-f", "jsonl", "-o", str(tmp_path)], monkeypatch, capsys)[0] == 0
    frame = pandas.read_json(tmp_path / "metrics.jsonl", lines=True)
    assert set(frame["metric"]) == {*metric_values(_results(SMOLLM2 / "privasis_sample")),
                                    *metric_values(_results(SMOLLM2 / "spia_sample"))}
    assert frame["ci_low"].le(frame["value"]).all() and frame["value"].le(frame["ci_high"]).all()


def test_hub_files_parse_back_with_huggingface_hubs_parser(tmp_path, monkeypatch, capsys):
    from huggingface_hub import parse_eval_result_entries

    code, out, err = run_main(["export", str(PRESIDIO), "-f", "hub", "-o", str(tmp_path), *LOCAL,
                               "--source-url", "https://example.org/board"], monkeypatch, capsys)
    assert code == 0, err
    files = sorted(p.name for p in tmp_path.iterdir())
    # one file per grader and preset, never mixed: the judged Privasis task, the SPIA task its adversary and matcher
    # graded, and the two families no model graded
    assert files == ["privasis-bench_adversary-llamacpp-smollm2--matcher-llamacpp-smollm2_harness-defaults.yaml",
                     "privasis-bench_llamacpp-smollm2_harness-defaults.yaml", "privasis-bench_no-judge_harness-defaults.yaml"]
    (spia,) = parse_eval_result_entries(yaml.safe_load((tmp_path / files[0]).read_text(encoding="utf-8")))
    assert spia.task_id == "spia_sample" and spia.value == _results(PRESIDIO / "spia_sample")["metrics"]["cpr"]
    assert "judge: adversary=llamacpp:smollm2, matcher=llamacpp:smollm2" in spia.notes
    files = files[1:]
    judged = parse_eval_result_entries(yaml.safe_load((tmp_path / files[0]).read_text(encoding="utf-8")))
    (entry,) = judged
    assert (entry.dataset_id, entry.task_id) == ("nvidia/Privasis-Zero", "privasis_sample")
    assert entry.value == _results(PRESIDIO / "privasis_sample")["metrics"]["headline"]["full_successful_record"]
    assert "judge: llamacpp:smollm2" in entry.notes and "not the paper's exact preset" in entry.notes
    assert "95% bootstrap interval" in entry.notes and entry.source_url == "https://example.org/board"
    unjudged = parse_eval_result_entries(yaml.safe_load((tmp_path / files[1]).read_text(encoding="utf-8")))
    by_task = {e.task_id: e for e in unjudged}
    assert by_task["tab_sample"].value == _results(PRESIDIO / "tab_sample")["metrics"]["token_recall"]
    assert by_task["tab_replacement_sample"].value == _results(PRESIDIO / "tab_replacement_sample")["metrics"]["trir"]


def test_a_hub_task_needs_a_dataset_id_and_unfinished_runs_are_refused(tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["export", str(SMOLLM2), "-f", "hub", "-o", str(tmp_path / "a")], monkeypatch, capsys)
    assert code == 2 and "pass --dataset-id privasis_sample=OWNER/NAME" in err
    copy = tmp_path / "run"
    shutil.copytree(SMOLLM2 / "privasis_sample", copy / "privasis_sample")
    results = _results(copy / "privasis_sample")
    results["complete"] = False
    (copy / "privasis_sample" / "results.json").write_text(json.dumps(results), encoding="utf-8")
    code, _, err = run_main(["export", str(copy), "-o", str(tmp_path / "b")], monkeypatch, capsys)
    assert code == 2 and "only finished runs are exported" in err
    assert not (tmp_path / "b" / "metrics.csv").exists()


def test_push_fails_fast_offline_after_writing_the_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, err = run_main(["export", str(SMOLLM2_PRIVASIS), "-f", "hub", "-o", str(tmp_path), LOCAL[0], LOCAL[1],
                             "--push", "someone/model"], monkeypatch, capsys)
    assert code == 2 and "HF_HUB_OFFLINE is set" in err and len(err.strip().splitlines()) == 1
    assert len(list(tmp_path.glob("*.yaml"))) == 1


@pytest.mark.parametrize("argv, message", [
    (["-f", "xml"], "--format 'xml': choose one of hub, eee, csv, jsonl"),
    (["--push", "a/b"], "--push uploads Hub eval-results files"),
    (["-f", "hub", "--dataset-id", "privasis_sample"], "expected TASK=OWNER/NAME"),
])
def test_bad_options_are_one_line(tmp_path, monkeypatch, capsys, argv, message):
    code, _, err = run_main(["export", str(SMOLLM2), "-o", str(tmp_path), *argv], monkeypatch, capsys)
    assert code == 2 and message in err


def test_a_folder_without_results_is_refused(tmp_path):
    with pytest.raises(Exception, match="no results.json here or up to two levels below"):
        find_task_runs(tmp_path)


def test_publishing_elsewhere_block_runs_with_the_seeded_entry(tmp_path, monkeypatch, capsys):
    import shlex

    from docs_examples.test_doc_examples import block_commands

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    commands = block_commands("docs/publishing-elsewhere.md",
                              "privasis-bench export submissions/HuggingFaceTB__SmolLM2-135M-Instruct")
    assert len(commands) == 3
    for command in commands:
        command = command.replace("submissions/", f"{ROOT}/submissions/").replace(
            "runs/my-model", f"{SMOLLM2_PRIVASIS} --dataset-id privasis_sample=nvidia/Privasis-Zero")
        code, out, err = run_main(shlex.split(command)[1:], monkeypatch, capsys)
        if "--push" in command:
            assert code == 2 and "HF_HUB_OFFLINE is set" in err
        else:
            assert code == 0, f"{command}: {err}"
    assert (tmp_path / "eval_results" / "privasis-bench_llamacpp-smollm2_harness-defaults.yaml").is_file()
    assert (tmp_path / "tables" / "metrics.csv").is_file() and (tmp_path / "tables" / "records.csv").is_file()


def test_push_opens_a_pull_request_with_the_files_on_the_hub(tmp_path, monkeypatch, capsys):
    from fake_hub import FakeHub

    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", "hf_test_token_not_real")
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        import huggingface_hub.constants as constants

        monkeypatch.setattr(constants, "ENDPOINT", hub.url)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        code, out, err = run_main(["export", str(SMOLLM2_PRIVASIS), "-f", "hub", "-o", str(tmp_path), LOCAL[0], LOCAL[1],
                                   "--push", "someone/model"], monkeypatch, capsys)
    assert code == 0, err
    (commit,) = hub.commits
    assert commit["repo"] == "someone/model" and commit["create_pr"] and commit["authorized"]
    (name,) = commit["files"]
    assert name == ".eval_results/privasis-bench_llamacpp-smollm2_harness-defaults.yaml"
    assert commit["files"][name] == (tmp_path / name.split("/", 1)[1]).read_bytes()
    assert "discussions/1" in out and "hf_test_token_not_real" not in out + err
