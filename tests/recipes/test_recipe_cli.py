"""The recipe commands: failures are recorded per row with one-line messages, settings changes are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.errors import PrivasisError

ROW = {"id": "r1", "record": "Dear Lena Okafor, see you on March 14 at the Elm Street Clinic.", "record_type": "email",
       "attributes": {"full_name": "Lena Okafor", "date": "March 14", "clinic": "Elm Street Clinic"},
       "grouped_attributes": {"Patient": {"full_name": "Lena Okafor"}, "Visit": {"date": "March 14", "clinic": "Elm Street Clinic"}}}


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_build_corpus_records_failed_model_calls_and_exits_1(tmp_path: Path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(ROW) + "\n")
    out = tmp_path / "out"
    # the identity baseline cannot answer recipe prompts (they carry no record): every call fails, recorded per row
    result = _invoke("build-corpus", "-r", "corpus", "-m", "identity", "--judge", "none", "-i", str(src), "-o", str(out),
                     "--no-cache", "--no-progress", "--max-attempts", "1")
    assert result.exit_code == 1, result.output
    (failure,) = [json.loads(x) for x in (out / "failures.jsonl").read_text().splitlines()]
    assert failure["id"] == "r1" and failure["step"] == "rank" and "model call failed" in failure["message"]
    assert (out / "benchmark.jsonl").read_text() == ""
    meta = json.loads((out / "benchmark.meta.json").read_text())
    assert meta["counts"]["failed"] == 1 and meta["counts"]["rows"] == 0

    with pytest.raises(PrivasisError, match=r"benchmark.jsonl was produced with other settings \(model\)"):
        _invoke("build-corpus", "-r", "corpus", "-m", "empty", "--judge", "none", "-i", str(src), "-o", str(out), "--no-cache")


def test_wrong_recipe_kind_and_bad_input_are_one_line_errors(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(PrivasisError, match="needs a 'corpus' recipe"):
        _invoke("build-corpus", "-r", "synthesis", "-m", "identity", "-i", str(bad), "-o", str(tmp_path / "o"))
    with pytest.raises(PrivasisError, match=r"bad.jsonl:1: invalid JSON"):  # named, never skipped silently
        _invoke("build-corpus", "-r", "corpus", "-m", "identity", "-i", str(bad), "-o", str(tmp_path / "o"))
    bad.write_text("\n\n")
    with pytest.raises(PrivasisError, match="no JSON rows"):
        _invoke("build-corpus", "-r", "corpus", "-m", "identity", "-i", str(bad), "-o", str(tmp_path / "o"))


@pytest.mark.parametrize("command", ["generate", "build-corpus"])
def test_a_second_recipe_run_into_the_same_folder_is_refused_in_one_line(tmp_path: Path, monkeypatch, capsys, command):
    from cli_main import run_main

    from privasis_bench.pipeline.lock import task_dir_lock

    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(ROW) + "\n")
    out = tmp_path / "out"
    argv = (["generate", "-r", "synthesis", "-n", "1"] if command == "generate"
            else ["build-corpus", "-r", "corpus", "--judge", "none", "-i", str(src)])
    with task_dir_lock(out, command):  # another run writing there (flock: a second descriptor conflicts too)
        code, stdout, stderr = run_main([*argv, "-m", "identity", "-o", str(out), "--no-cache", "--no-progress"],
                                        monkeypatch, capsys)
    lines = [ln for ln in (stdout + stderr).splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert str(out) in lines[0] and "being written by another privasis-bench process" in lines[0] and command in lines[0]
    assert sorted(p.name for p in out.iterdir()) == [".privasis-bench.lock"]  # nothing written


def test_a_generate_run_that_produced_no_row_leaves_no_empty_corpus_file(tmp_path: Path, monkeypatch, capsys):
    from cli_main import run_main

    out = tmp_path / "out"
    # the identity baseline cannot answer recipe prompts: every record fails
    code, stdout, _ = run_main(["generate", "-r", "synthesis", "-m", "identity", "-n", "1", "-o", str(out), "--no-cache",
                                "--no-progress", "--max-attempts", "1"], monkeypatch, capsys)
    assert code == 1 and not (out / "corpus.jsonl").exists() and (out / "corpus.meta.json").exists()
    assert "no corpus row yet" in stdout
    # the next step names what happened instead of "file not found" alone
    code, stdout, stderr = run_main(["build-corpus", "-r", "corpus", "-m", "identity", "-i", str(out / "corpus.jsonl"),
                                     "-o", str(tmp_path / "bench"), "--no-progress"], monkeypatch, capsys)
    assert code == 2 and "has produced no row yet" in stderr and "failures" in stderr, stderr
    # a re-run with other settings is still refused though no row was written
    code, _, stderr = run_main(["generate", "-r", "synthesis", "-m", "empty", "-n", "1", "-o", str(out), "--no-cache",
                                "--no-progress"], monkeypatch, capsys)
    assert code == 2 and "other settings" in stderr
