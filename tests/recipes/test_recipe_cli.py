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
