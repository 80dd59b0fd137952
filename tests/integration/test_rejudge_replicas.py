"""`leaderboard verify --judge-replicas 2` (what .ci/run uses): two copies of the pinned llama.cpp judge give the
committed re-judge of a seeded entry exactly (every recorded decision of its whole pool agrees again, and the
agreement equals the committed row of leaderboards/rejudge.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main

from integration.servers import IN_PROCESS_SMOLLM2, require_modules

REPO = Path(__file__).resolve().parents[2]
ENTRY = "submissions/scrubadub__scrubadub/privasis_sample"  # the smallest pool (5 judged attributes), whole re-asked


@pytest.mark.integration
def test_two_judge_copies_give_the_committed_rejudge(tmp_path, monkeypatch, capsys):
    require_modules(IN_PROCESS_SMOLLM2, "pip install '.[llamacpp]'")
    if not (REPO / ENTRY).is_dir():
        pytest.skip("not a source checkout (no submissions/)")
    committed = next(e for e in json.loads((REPO / "leaderboards/rejudge.json").read_text())["entries"]
                     if e["path"] == ENTRY)["agreement"]
    monkeypatch.chdir(REPO)
    report = tmp_path / "rejudge.json"
    code, out, err = run_main(["leaderboard", "verify", ENTRY, "--max-disagreements", "2", "--judge-replicas", "2",
                               "--seed", str(committed["seed"]), "--report", str(report)], monkeypatch, capsys)
    assert code == 0, (out, err)
    got = next(e for e in json.loads(report.read_text())["entries"] if e["path"] == ENTRY)["agreement"]
    assert got == committed and got["asked"] == got["pool"] == got["agreed"] > 0
