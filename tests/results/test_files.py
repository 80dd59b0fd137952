"""Results files: atomic writes, loading, git revision, summary tables."""

from __future__ import annotations

import json
import os

import pytest

from privasis_bench.protocol.verdicts import KeepVerdict, RecordVerdict, TargetVerdict
from privasis_bench.results.files import (
    ResultsError,
    atomic_write_text,
    git_revision,
    load_results,
    load_sample_rows,
    task_dirs,
    verdicts_from_rows,
    write_results,
    write_samples,
)
from privasis_bench.results.tables import compare_table, summary_table


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "a" / "f.json"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]  # no temporary left behind


def test_crash_during_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    atomic_write_text(path, '{"complete": true}')

    def boom(src, dst):
        raise OSError("disk vanished")

    monkeypatch.setattr(os, "replace", boom)
    from privasis_bench.fsutil import FileProblem

    with pytest.raises(FileProblem, match=r"results\.json: cannot write it \(disk vanished\)"):  # one line, the path named
        atomic_write_text(path, '{"complete": fal')
    assert json.loads(path.read_text()) == {"complete": True}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_results_refuse_nan(tmp_path):
    with pytest.raises(ValueError):
        write_results(tmp_path / "results.json", {"x": float("nan")})
    assert not (tmp_path / "results.json").exists()


def test_round_trip_and_task_dirs(tmp_path):
    verdict = RecordVerdict(
        record_id="r1", category="c", record_type="t", output_failed=False,
        targets=[TargetVerdict("n", "drop", None, ["a", 1], tier="proximity", guess="g", original_guess="o", compare_answer="both")],
        keep=[KeepVerdict("k", {"x": 1}, retained=True, via="judge", guess="g", inclusion_answer="YES")],
    )
    task = tmp_path / "run" / "task1"
    write_samples(task / "samples.jsonl", [verdict.to_dict(), {"record_id": "r2", "status": "excluded"}])
    write_results(task / "results.json", {"task": {"name": "task1"}})
    rows = load_sample_rows(task)
    assert verdicts_from_rows(rows)[0].to_dict() == verdict.to_dict()
    assert load_results(task)["format"].startswith("privasis-bench/results/")
    assert task_dirs(tmp_path / "run") == [task] and task_dirs(task) == [task]
    with pytest.raises(ResultsError):
        task_dirs(tmp_path)


def test_git_revision_is_sha_or_none(tmp_path):
    assert git_revision(tmp_path) is None
    rev = git_revision()
    assert rev is None or len(rev) == 40


def test_tables_render():
    from rich.console import Console

    res = {"task": {"name": "t"}, "model": {"label": "m"}, "judge": {"label": "none (direct/verbatim only)"},
           "metrics": {"headline": {"sanitization_record": 50.0}, "ci": {"sanitization_record": {"low": 40.0, "high": 60.0}}},
           "counts": {"scored": 3}}
    console = Console(record=True, width=200)
    console.print(summary_table([res]))
    text = console.export_text()
    assert "50.00" in text and "[40.00, 60.00]" in text and "none (direct/verbatim only)" in text
    cmp = {"common_records": 2, "bootstrap": {"samples": 10, "seed": 1},
           "metrics": {"full_successful_record": {"a": 1.0, "b": 0.5, "diff": 0.5, "ci_low": 0.1, "ci_high": 0.9, "p_value": 0.02}}}
    console.print(compare_table("t", cmp))
    assert "+0.50" in console.export_text()
