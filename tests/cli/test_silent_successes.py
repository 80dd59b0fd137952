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
