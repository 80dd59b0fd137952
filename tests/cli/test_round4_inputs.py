"""Issue 42 (bad inputs and silent successes outside TAB, Ray and the board): each ends in one clear line naming the
option, field or value and what is accepted, exit 2, and nothing written."""

from __future__ import annotations

import json

import pytest
from cli_main import run_main
from fake_openai_server import make_row

from privasis_bench.tasks.paths import builtin_tasks_dir

RUN = ["run", "-m", "identity", "--judge", "none", "--no-progress", "--bootstrap-samples", "20"]


def _one_error_line(code: int, err: str, *fragments: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in err, err
    assert all(f in lines[0] for f in fragments), lines[0]
    return lines[0]


@pytest.mark.parametrize("argv", [
    ["sanitize", "-m", "identity", "-t", "privasis_sample"],
    RUN + ["-t", "privasis_sample"],
    ["evaluate", "-p", "/nonexistent/p.jsonl", "-t", "privasis_sample", "--judge", "none"],
], ids=["sanitize", "run", "evaluate"])
def test_an_empty_data_files_value_names_the_option(argv, tmp_path, monkeypatch, capsys):
    code, _, err = run_main([*argv, "--data-files", "", "-o", str(tmp_path / "out")], monkeypatch, capsys)
    _one_error_line(code, err, "--data-files", "jsonl")
    assert not (tmp_path / "out").exists()


def test_data_inspect_with_an_empty_data_files_value(monkeypatch, capsys):
    code, _, err = run_main(["data", "inspect", "-t", "privasis_sample", "--data-files", " , "], monkeypatch, capsys)
    _one_error_line(code, err, "--data-files")


@pytest.mark.parametrize("command", ["sanitize", "run"])
@pytest.mark.parametrize("value", ["../../../etc", "/etc", "en core"])
def test_a_spacy_model_must_be_a_package_name_or_a_pipeline_directory(command, value, tmp_path, monkeypatch, capsys):
    pytest.importorskip("presidio_analyzer")
    argv = [command, "-m", f"presidio,spacy_model={value}", "-t", "privasis_sample", "-o", str(tmp_path / "out"),
            "--no-progress"] + (["--judge", "none"] if command == "run" else [])
    code, _, err = run_main(argv, monkeypatch, capsys)
    _one_error_line(code, err, "spacy_model", repr(value), "package name", "directory")
    assert not (tmp_path / "out").exists()


def test_a_spacy_model_in_a_task_yaml_is_checked_before_anything_runs(tmp_path, monkeypatch, capsys):
    tasks = builtin_tasks_dir()
    yaml = tmp_path / "badtab.yaml"
    yaml.write_text(f"task: badtab\ninclude: {tasks / '_tab_base.yaml'}\ndataset:\n  data_files: "
                    f"{tasks / 'sample' / 'tab_sample.json'}\nscorer_args:\n  instruction_template: "
                    f"{tasks / 'prompts' / 'tab' / 'instruction.txt'}\n  spacy_model: ../../../etc\n", encoding="utf-8")
    code, _, err = run_main(["run", "-m", "identity", "-t", str(yaml), "-o", str(tmp_path / "out"), "--no-progress"],
                            monkeypatch, capsys)
    _one_error_line(code, err, "badtab.yaml", "scorer_args.spacy_model", "'../../../etc'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, fragment", [
    (bytes(range(256)) * 4, "binary"),
    (b'{"messages": [{"role": "user", "content": "a"}]}\n\xff\xfe\n', "not UTF-8"),
    (b'{"messages": NaN}\n', "data.jsonl:1"),
], ids=["binary", "latin1", "nan"])
def test_train_reads_its_data_before_loading_anything(content, fragment, tmp_path, monkeypatch, capsys):
    data = tmp_path / "data.jsonl"
    data.write_bytes(content)
    code, _, err = run_main(["train", "-r", "train_cleaner_0.6b", "--data", str(data), "-o", str(tmp_path / "model")],
                            monkeypatch, capsys)
    _one_error_line(code, err, "data.jsonl", fragment)
    assert not (tmp_path / "model").exists()


@pytest.mark.parametrize("value", [{"a": [1]}, ["x"], True, 1.5])
def test_a_category_that_is_not_text_is_refused_naming_record_and_field(value, tmp_path, monkeypatch, capsys):
    row = {**make_row(1), "category": value}
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "--data-files", str(data), "-o", str(tmp_path / "out")],
                            monkeypatch, capsys)
    _one_error_line(code, err, "r001", "category", "expected a string")
    assert not (tmp_path / "out" / "privasis_sample" / "results.json").exists()


def test_a_whole_number_category_is_kept_as_text(tmp_path, monkeypatch, capsys):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({**make_row(1), "category": 7}) + "\n", encoding="utf-8")
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "--data-files", str(data), "-o", str(tmp_path / "out")],
                            monkeypatch, capsys)
    assert code == 0, err
    row = json.loads((tmp_path / "out" / "privasis_sample" / "samples.jsonl").read_text().splitlines()[0])
    assert row["category"] == "7"


def test_linkage_k_is_a_cap_said_on_the_console_and_recorded(tmp_path, monkeypatch, capsys):
    code, _, err = run_main([*RUN, "-t", "privasis_sample", "-o", str(tmp_path / "run"), "--limit", "6"], monkeypatch, capsys)
    assert code == 0, err
    task_dir = tmp_path / "run" / "privasis_sample"
    code, out, err = run_main(["linkage", str(tmp_path / "run"), "-k", "1000"], monkeypatch, capsys)
    assert code == 0, err
    big = json.loads((task_dir / "linkage.json").read_text())
    most = big["most_known_attributes"]
    assert 0 < most < 1000 and big["attacks_knowing_fewer_than_k"] == big["attacked_records"]
    assert f"-k 1000 is more than any attacked record knows (at most {most}" in " ".join(out.split())
    code, out, err = run_main(["linkage", str(tmp_path / "run"), "-k", str(most)], monkeypatch, capsys)
    assert code == 0, err
    report = json.loads((task_dir / "linkage.json").read_text())
    assert [a["claims"] for a in report["attacks"]] == [a["claims"] for a in big["attacks"]]  # the same attack
    fewer = sum(len(a["claims"]) < most for a in report["attacks"])
    assert report["attacks_knowing_fewer_than_k"] == fewer
    assert (f"{fewer} of {report['attacked_records']} attacked record(s) have fewer" in " ".join(out.split())) == bool(fewer)
