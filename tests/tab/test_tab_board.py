"""The board's TAB section: the committed section is what verifying and building the committed runs gives, and a
run whose numbers or spans were changed is left out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from privasis_bench.leaderboard.tab_board import build_tab_section, verify_tab_run

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "submissions" / "tab"


def test_the_committed_tab_section_is_rebuilt_exactly_from_the_committed_runs(tmp_path):
    json_path, md_path, rejected = build_tab_section(RUNS, tmp_path)
    assert rejected == []
    assert json_path.read_text(encoding="utf-8") == (REPO / "leaderboards" / "tab.json").read_text(encoding="utf-8")
    assert md_path.read_text(encoding="utf-8") == (REPO / "leaderboards" / "tab.md").read_text(encoding="utf-8")
    entries = json.loads(json_path.read_text(encoding="utf-8"))["entries"]
    assert {e["model"] for e in entries} == {"identity", "regex-scrubber", "presidio"}
    assert all("headline" not in e["metrics"] for e in entries)  # TAB's columns only


def _copy(tmp_path: Path, entry: str) -> Path:
    target = tmp_path / entry / "tab_sample"
    shutil.copytree(RUNS / entry / "tab_sample", target)
    return target


def test_a_changed_number_or_span_is_caught(tmp_path):
    run = _copy(tmp_path, "baselines__regex-scrubber")
    assert verify_tab_run(run) == []
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    results["metrics"]["token_recall"] += 0.01
    (run / "results.json").write_text(json.dumps(results), encoding="utf-8")
    assert any("metrics.token_recall" in p for p in verify_tab_run(run))

    run = _copy(tmp_path / "b", "baselines__identity")
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["output"] = rows[0]["output"].replace("Wiśniewski", "[NAME]")
    (run / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert any("alignment of the stored output" in p for p in verify_tab_run(run))
    _, _, rejected = build_tab_section(tmp_path / "b", tmp_path / "board")
    assert len(rejected) == 1


def test_compare_pairs_two_tab_runs_by_document():
    from privasis_bench.results.compare import compare_runs

    [(name, comparison)] = compare_runs(RUNS / "microsoft__presidio", RUNS / "baselines__identity", bootstrap_samples=200, seed=7)
    assert name == "tab_sample" and comparison["common_records"] == 10
    recall = comparison["metrics"]["mention_recall"]
    assert recall["b"] == 0.0 and recall["diff"] == recall["a"] > 0 and recall["ci_low"] > 0 and recall["p_value"] < 0.05
    again = compare_runs(RUNS / "microsoft__presidio", RUNS / "baselines__identity", bootstrap_samples=200, seed=7)
    assert again[0][1] == comparison  # seeded
