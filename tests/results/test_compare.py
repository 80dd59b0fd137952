"""``compare`` goes through the scorer of the family both runs' results name (one path for every family)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.protocol.scorer import PrivasisScorer
from privasis_bench.results.compare import compare_runs
from privasis_bench.results.files import ResultsError


def _task(root: Path, scorer: dict | None) -> Path:
    task = root / "t"
    task.mkdir(parents=True)
    results = {"task": {"name": "t"}, "metrics": {"bootstrap": {"samples": 7, "seed": 3, "confidence": 0.9}}}
    (task / "results.json").write_text(json.dumps(results | ({"scorer": scorer} if scorer else {})))
    (task / "samples.jsonl").write_text(json.dumps({"id": "d1"}) + "\n")
    return root


def test_a_run_without_a_scorer_section_is_compared_by_the_default_familys_scorer(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(PrivasisScorer, "compare", staticmethod(lambda a, b, **kw: seen.append((a, b, kw)) or {"x": 1}))
    got = compare_runs(_task(tmp_path / "a", None), _task(tmp_path / "b", None))
    assert got == [("t", {"x": 1})]
    assert seen == [([{"id": "d1"}], [{"id": "d1"}], {"samples": 7, "seed": 3, "confidence": 0.9})]


def test_runs_of_two_families_are_refused_in_one_line(tmp_path):
    with pytest.raises(ResultsError, match="cannot compare runs scored by 'privasis' and 'tab'"):
        compare_runs(_task(tmp_path / "a", None), _task(tmp_path / "b", {"name": "tab"}))
    with pytest.raises(ResultsError, match="cannot compare runs scored by 'nosuch' and 'nosuch'"):
        compare_runs(_task(tmp_path / "c", {"name": "nosuch"}), _task(tmp_path / "d", {"name": "nosuch"}))
