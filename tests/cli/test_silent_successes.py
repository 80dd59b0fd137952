"""Issue 23 point 2: what used to succeed silently is now an error, or is reported row by row."""

from __future__ import annotations

import json

import pytest
from cli_main import run_main

from privasis_bench.tasks.paths import builtin_tasks_dir

RUN = ["run", "-m", "identity", "--judge", "none", "--no-progress", "--bootstrap-samples", "20"]


def _rows(n: int = 3) -> list[dict]:
    path = builtin_tasks_dir() / "sample" / "privasis_sample.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:n]]


def test_a_directory_named_like_a_task_does_not_shadow_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "privasis_sample").mkdir()  # what `-o .` leaves behind
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "--limit", "2", "-o", "out"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "privasis_sample" / "results.json").read_text())["counts"]["scored"] > 0


@pytest.mark.parametrize("tasks", [",", "./"])
def test_a_selection_naming_no_task_is_an_error(tmp_path, monkeypatch, capsys, tasks):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main([*RUN, "-t", tasks, "-o", "out"], monkeypatch, capsys)
    assert code == 2 and ("names no task" in err or "holds no task definition" in err), err


def test_empty_output_path_is_an_error(tmp_path, monkeypatch, capsys):
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "-o", ""], monkeypatch, capsys)
    assert code == 2 and "-o must not be empty" in err


@pytest.mark.parametrize("name", ["../escape", "a/b", ".hidden"])
def test_task_names_cannot_leave_the_output_directory(tmp_path, monkeypatch, capsys, name):
    task = tmp_path / "t.yaml"
    task.write_text(f"task: '{name}'\ninclude: {builtin_tasks_dir() / 'privasis_sample.yaml'}\n", encoding="utf-8")
    code, _, err = run_main([*RUN, "-t", str(task), "-o", str(tmp_path / "out")], monkeypatch, capsys)
    assert code == 2 and "task name" in err and not (tmp_path / "escape").exists()


@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(original_record="  "), "original_record"),
    (lambda r: r.update(attributes_to_keep=json.dumps({"k": {"value": "", "sanitization": "keep"}})), "attributes_to_keep.k"),
    (lambda r: r.update(attributes_to_keep=json.dumps({"k": {"value": [], "sanitization": "keep"}})), "attributes_to_keep.k"),
])
def test_empty_texts_and_values_make_invalid_rows_reported_one_by_one(tmp_path, monkeypatch, capsys, edit, field):
    rows = _rows()
    edit(rows[1])
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "--data-files", str(data), "-o", str(tmp_path / "a")],
                            monkeypatch, capsys)
    assert code == 2 and field in err and rows[1]["id"] in err
    code, out, _ = run_main([*RUN, "-t", "privasis_sample", "--data-files", str(data), "-o", str(tmp_path / "b"),
                             "--skip-invalid"], monkeypatch, capsys)
    assert code == 0 and f"skipped invalid row 2 (record {rows[1]['id']})" in out
    details = json.loads((tmp_path / "b" / "privasis_sample" / "results.json").read_text())["invalid_row_details"]
    assert details == [{"id": rows[1]["id"], "row": 2, "field": field, "reason": details[0]["reason"]}]


def test_an_unknown_file_in_judge_prompts_is_named(tmp_path, monkeypatch, capsys):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "guess_targt.txt").write_text("What is the {attribute}? {text}", encoding="utf-8")
    code, _, err = run_main(["run", "-m", "identity", "--judge", "llamacpp:smollm2", "--no-progress", "-t", "privasis_sample",
                             "--judge-prompts", str(prompts), "-o", str(tmp_path / "o")], monkeypatch, capsys)
    assert code == 2 and "guess_targt.txt" in err and "guess_target.txt" in err and "is not a judge template name" in err


def test_a_data_file_changed_between_check_and_flow_stops_the_run(tmp_path):
    from privasis_bench.data.loading import load_records, with_data_files
    from privasis_bench.errors import DataError
    from privasis_bench.tasks.registry import load_task

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    loaded = load_records(with_data_files(load_task("privasis_sample"), [str(data)]), stream=True)
    assert [r.id for r in loaded.iter_records()] == loaded.ids  # unchanged: read again as checked
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()[:2]), encoding="utf-8")
    with pytest.raises(DataError, match="rows.jsonl: the data file changed after it was checked"):
        list(loaded.iter_records())


# ---- issue 34 point 2 and 8: what used to pass without a word ----------------------------------------------------

def test_shipped_task_and_recipe_files_can_be_included_by_name(tmp_path, monkeypatch, capsys):
    from privasis_bench.recipes.config import load_recipe, recipes_dir

    task = tmp_path / "mine.yaml"
    task.write_text("task: mine\ninclude: privasis_sample.yaml\n", encoding="utf-8")
    base = tmp_path / "base.yaml"  # the include-only base, with the sample's data named by its shipped path
    base.write_text("task: from_base\ninclude: _privasis_base.yaml\nprompt: {template: prompts/sanitize.txt}\n"
                    "dataset: {path: null, revision: null, data_files: sample/privasis_sample.jsonl}\n", encoding="utf-8")
    for path, name in ((task, "mine"), (base, "from_base")):
        code, _, err = run_main([*RUN, "-t", str(path), "--limit", "1", "-o", str(tmp_path / "o")], monkeypatch, capsys)
        assert code == 0, err
        assert (tmp_path / "o" / name / "results.json").is_file()
    recipe = tmp_path / "r.yaml"
    recipe.write_text("recipe: mine\ninclude: corpus.yaml\ncorpus: {keep_count: [1, 3]}\n", encoding="utf-8")
    loaded = load_recipe(recipe)
    assert loaded.corpus.keep_count == (1, 3) and loaded.prompts == load_recipe(recipes_dir() / "corpus.yaml").prompts


def test_a_user_task_named_like_a_shipped_one_is_refused_on_the_include_path(tmp_path, monkeypatch, capsys):
    user = tmp_path / "tasks"
    user.mkdir()
    (user / "copy.yaml").write_text("task: privasis_sample\ninclude: privasis_sample.yaml\n", encoding="utf-8")
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "--include-path", str(user), "-o", str(tmp_path / "o")],
                            monkeypatch, capsys)
    assert code == 2 and "copy.yaml" in err and "name of a shipped task" in err, err


def test_a_second_submit_under_one_name_needs_replace(tmp_path, monkeypatch, capsys):
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "--limit", "2", "-o", str(tmp_path / "own")], monkeypatch, capsys)
    assert code == 0, err  # bootstrap settings of its own: submit refuses what verify would refuse, writing nothing
    code, _, err = run_main(["submit", str(tmp_path / "own"), "--name", "me/model", "--submissions-dir",
                             str(tmp_path / "subs")], monkeypatch, capsys)
    assert code == 2 and "would refuse" in err and "metrics.bootstrap.samples is 20" in err and not (tmp_path / "subs").exists()
    code, _, err = run_main([*RUN[:-2], "-t", "privasis_sample", "--limit", "2", "-o", str(tmp_path / "run")],
                            monkeypatch, capsys)
    assert code == 0, err
    submit = ["submit", str(tmp_path / "run"), "--name", "me/model", "--submissions-dir", str(tmp_path / "subs")]
    assert run_main(submit, monkeypatch, capsys)[0] == 0
    code, _, err = run_main(submit, monkeypatch, capsys)
    assert code == 2 and "already submitted" in err and "--replace" in err, err
    assert run_main([*submit, "--replace"], monkeypatch, capsys)[0] == 0


def test_leaderboard_build_names_a_broken_submission_it_leaves_off(tmp_path, monkeypatch, capsys):
    import shutil
    from pathlib import Path

    subs = tmp_path / "subs"
    shutil.copytree(Path(__file__).resolve().parents[2] / "submissions" / "baselines__identity", subs / "baselines__identity")
    broken = next(subs.rglob("submission.json"))
    broken.write_text("{ not json", encoding="utf-8")
    code, out, err = run_main(["leaderboard", "build", "--submissions-dir", str(subs), "-o", str(tmp_path / "board")],
                              monkeypatch, capsys)
    assert code == 1 and f"left off the board: {broken.parent}" in out, out + err


def _run(tmp_path, monkeypatch, capsys, limit: int = 3):
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "--limit", str(limit), "-o", str(tmp_path / "run")],
                            monkeypatch, capsys)
    assert code == 0, err
    return tmp_path / "run" / "privasis_sample"


@pytest.mark.parametrize("tamper, named", [
    (lambda r: r["counts"].update(judged_records=r["counts"]["judged_records"] + 1), "counts.judged_records"),
    (lambda r: r.update(unjudged_records=["not-a-record"]), "unjudged_records"),
    (lambda r: r["counts"].update(failed_outputs=1), "counts.failed_outputs"),
])
def test_rescore_checks_counts_and_record_ids(tmp_path, monkeypatch, capsys, tamper, named):
    task_dir = _run(tmp_path, monkeypatch, capsys)
    results = json.loads((task_dir / "results.json").read_text())
    tamper(results)
    (task_dir / "results.json").write_text(json.dumps(results))
    code, out, _ = run_main(["rescore", str(task_dir)], monkeypatch, capsys)
    assert code == 1 and named in out, out
    code, _, err = run_main(["rescore", str(task_dir), "--write"], monkeypatch, capsys)
    assert code == 2 and "refusing to write" in err and named in err, err


def test_missing_predictions_are_left_out_and_reported_or_scored_as_empty_when_asked(tmp_path, monkeypatch, capsys):
    task_dir = _run(tmp_path, monkeypatch, capsys)
    lines = (task_dir / "sanitized.jsonl").read_text().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(lines[:2]) + "\n")
    missing_id = json.loads(lines[2])["id"]
    base = ["evaluate", "-p", str(partial), "-t", "privasis_sample", "--judge", "none", "--limit", "3", "--no-progress",
            "--bootstrap-samples", "20"]
    code, out, _ = run_main([*base, "-o", str(tmp_path / "left")], monkeypatch, capsys)
    results = json.loads((tmp_path / "left" / "privasis_sample" / "results.json").read_text())
    assert code == 1 and "left out of the scores" in out and "--score-missing-as-empty" in out, out
    assert results["complete"] is False and results["counts"]["missing_predictions"] == 1
    assert results["missing_prediction_records"] == [missing_id] and results["counts"]["failed_outputs"] == 0
    assert results["counts"]["judged_records"] == 2 and results["model"]["predictions"]["missing_policy"] == "leave_out"
    assert run_main(["rescore", str(tmp_path / "left")], monkeypatch, capsys)[0] == 0  # the recount agrees
    code, out, _ = run_main([*base, "-o", str(tmp_path / "empty"), "--score-missing-as-empty"], monkeypatch, capsys)
    results = json.loads((tmp_path / "empty" / "privasis_sample" / "results.json").read_text())
    assert code == 0, out
    assert "1 record(s) have no line in the predictions file and were scored as empty outputs" in " ".join(out.split())
    assert results["counts"]["judged_records"] == 3 and results["counts"]["empty_outputs"] == 1
    assert results["model"]["predictions"]["missing_policy"] == "empty" and results["model"]["predictions"]["missing_ids"] == [missing_id]


@pytest.mark.parametrize("label, ok", [
    ("HuggingFaceTB/SmolLM2-135M-Instruct", True), ("meta-llama/Llama-3.1-8B-Instruct", True), ("gpt-4.1-mini", True),
    ("sk-proj-abcdef0123456789", False), ("hf_AbCdEfGhIjKlMnOpQrStUv", False), ("a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8", False),
    ("/home/me/model.gguf", False), ("~/model.gguf", False), ("api_key=abc", False),
])
def test_model_labels_are_names_never_keys_or_local_paths(label, ok):
    from privasis_bench.cli.value_checks import check_label
    from privasis_bench.errors import PrivasisError

    if ok:
        check_label("--model-label", label)
    else:
        with pytest.raises(PrivasisError, match="--model-label"):
            check_label("--model-label", label)
