"""Issue 50.4 for the span families: a board's per-document page prints the verifier's recomputed measures."""

from __future__ import annotations

import json
from pathlib import Path

from privasis_bench.leaderboard.families.span_viewer import write_span_viewer

REPO = Path(__file__).resolve().parents[2]
ENTRY = REPO / "submissions" / "baselines__regex-scrubber" / "tab_sample"


def test_the_span_page_prints_the_metrics_it_is_given_and_says_whose(tmp_path):
    submitted = json.loads((ENTRY / "results.json").read_text(encoding="utf-8"))["metrics"]
    recomputed = {**submitted, "token_recall": 0.4321}
    page = write_span_viewer(ENTRY, tmp_path / "board.html", metrics=recomputed).read_text(encoding="utf-8")
    assert "<td>token_recall</td><td>0.432</td>" in page and "recomputed by the verifier" in page
    own = write_span_viewer(ENTRY, tmp_path / "own.html").read_text(encoding="utf-8")
    assert f"<td>token_recall</td><td>{submitted['token_recall']:.3f}</td>" in own
    assert "recomputed by the verifier" not in own
