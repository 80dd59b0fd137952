"""Records stream through a run (issue 12): the run never holds the task's records in memory, and what it
writes is the same as when every record is loaded first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import write_tiny_task

from privasis_bench.data.loading import LoadedRecords, load_records
from privasis_bench.tasks.registry import load_task


def _run(yaml: Path, out: Path, monkeypatch, capsys) -> None:
    code, stdout, _ = run_main(["run", "-m", "identity", "--judge", "none", "-t", str(yaml), "-o", str(out), "--no-cache",
                                "--no-progress", "--bootstrap-samples", "50"], monkeypatch, capsys)
    assert code == 0, stdout


def test_run_reads_records_one_at_a_time_and_writes_the_same_files(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=12)
    _run(yaml, tmp_path / "eager", monkeypatch, capsys)

    def refuse(self: LoadedRecords) -> list:
        raise AssertionError("the run asked for every record in memory")

    monkeypatch.setattr(LoadedRecords, "records", property(refuse))
    _run(yaml, tmp_path / "streamed", monkeypatch, capsys)
    a, b = (tmp_path / name / "tiny" for name in ("eager", "streamed"))
    assert (a / "samples.jsonl").read_bytes() == (b / "samples.jsonl").read_bytes()
    assert (a / "sanitized.jsonl").read_bytes() == (b / "sanitized.jsonl").read_bytes()
    ra, rb = (json.loads((d / "results.json").read_text()) for d in (a, b))
    assert ra["metrics"] == rb["metrics"] and ra["counts"] == rb["counts"] and ra["dataset"] == rb["dataset"]


def test_a_streamed_task_keeps_ids_and_exclusions_and_reads_records_again(tmp_path: Path) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=5)
    task = load_task(str(yaml))
    eager = load_records(task)
    streamed = load_records(task, stream=True)
    assert streamed.ids == [r.id for r in eager.records] and streamed.ids_hash == eager.ids_hash
    assert len(streamed) == 5 and streamed.scored_count == len(eager.scored)
    assert [r.id for r in streamed.iter_records()] == streamed.ids
    assert [r.id for r in streamed.iter_records()] == streamed.ids  # a second pass reads the file again
    assert streamed._records is None  # nothing was materialized


def test_json_lines_are_read_one_line_at_a_time_with_errors_naming_the_line(tmp_path: Path) -> None:
    from privasis_bench.data.loading import iter_rows
    from privasis_bench.errors import DataError
    from privasis_bench.tasks.config import DatasetConfig

    data = tmp_path / "rows.jsonl"
    data.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": "\xff"}\n')
    rows = iter_rows(DatasetConfig(data_files=[str(data)], path=None, revision=None))
    assert next(rows) == {"a": 1} and next(rows) == {"a": 2}
    with pytest.raises(DataError, match=r"offset 25, line 3"):
        next(rows)
