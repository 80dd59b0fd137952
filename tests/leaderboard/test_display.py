"""Board display (issue 42): tied ranks, clipped chart labels, no agreement badge for nothing re-asked."""

from __future__ import annotations

from privasis_bench.leaderboard.charts import LABEL_CHARS, leak_bars
from privasis_bench.leaderboard.markdown import rank_text
from privasis_bench.leaderboard.page import _entry_cell


def test_a_long_bar_label_is_clipped_with_the_whole_label_as_tooltip():
    name = "HuggingFaceTB/SmolLM2-135M-Instruct-with-a-very-long-suffix"
    svg = leak_bars([{"name": name, "task": "privasis_sample", "track": "verified",
                      "leaks": {"ratios": {"direct": 50.0}, "failed_targets": 4}}])
    assert f"<title>{name} · privasis_sample</title>" in svg
    shown = svg.split("</title>", 1)[1].split("</text>", 1)[0]
    assert len(shown) == LABEL_CHARS and shown.endswith("…")


def test_tied_ranks_read_as_ties():
    assert rank_text({"rank": 1, "tied": True}) == "1="
    assert rank_text({"rank": 3, "tied": False}) == "3" and rank_text({"rank": None}) == "–"


def test_an_entry_with_nothing_re_asked_shows_no_agreement_badge():
    row = {"name": "a/b", "model": "m", "judge": "j", "records": 5,
           "rejudge_agreement": {"judge": "llamacpp:smollm2", "agreed": 0, "asked": 0, "seed": 1, "sample": 0}}
    cell = _entry_cell(row)
    assert "0/0 agree" not in cell and "re-judge: nothing re-asked" in cell and "tag ok" not in cell
