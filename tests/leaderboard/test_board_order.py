"""Issue 54.3: ranks only where one order means something, the frontier where two measures pull apart, degenerate
baselines apart, model arguments kept in labels, family prose from the registry, and the downloads' CSV defused."""

from __future__ import annotations

import re

from privasis_bench.leaderboard.build import with_arguments
from privasis_bench.leaderboard.downloads import csv_text
from privasis_bench.leaderboard.family_api import board_families
from privasis_bench.leaderboard.frontier import frontier_chart, spread
from privasis_bench.leaderboard.markdown import board_intro
from privasis_bench.leaderboard.page import verified_heading
from privasis_bench.leaderboard.rows import rank_rows
from privasis_bench.tasks.family import FAMILIES


def _frontier_family() -> str:
    return next(f.name for f in board_families() if f.board.frontier)


def _row(name, family, degenerate=None, **values):
    return {"family": family, "name": name, "task": "t", "track": "verified", "record_set": "s", "partial": False,
            "records": 10, "rankable": True, "degenerate": degenerate, **values}


def _pair(family, x, y):
    (xk, _), (yk, _) = FAMILIES.get(family).board.rank_by[:2]
    return {xk: x, yk: y}


def test_a_frontier_family_gets_no_rank_but_its_frontier_and_degenerate_baselines_come_last():
    fam = _frontier_family()
    rows = rank_rows([_row("empty", fam, "deletes everything", **_pair(fam, 0.0, 0.0)),
                      _row("identity", fam, "changes nothing", **_pair(fam, 100.0, 100.0)),
                      _row("a", fam, **_pair(fam, 100.0, 97.3)), _row("b", fam, **_pair(fam, 100.0, 70.0)),
                      _row("c", fam, **_pair(fam, 50.0, 60.0)), _row("d", fam, **_pair(fam, 100.0, 97.30001))])
    got = {r["name"]: r for r in rows}
    assert all(r["rank"] is None for r in rows)
    assert got["a"]["frontier"] and got["c"]["frontier"] and got["d"]["frontier"]  # d equals a as shown
    assert not got["b"]["frontier"] and got["b"]["dominated_by"] == ["a", "d"]
    assert [r["name"] for r in rows][-2:] == ["empty", "identity"]  # never above a real system
    assert "frontier" not in got["empty"] and got["empty"]["rankable"] is False


def test_a_group_that_ties_everywhere_on_the_headline_shows_no_rank_and_says_why():
    key = FAMILIES.get("privasis").board.rank_key
    tied = rank_rows([_row(n, "privasis", **{key: 0.0}) for n in ("a", "b", "c")])
    assert all(r["rank"] is None and "no order" in r["no_order"] for r in tied)
    ranked = rank_rows([_row("a", "privasis", **{key: 1.0}), _row("b", "privasis", **{key: 0.0}),
                        _row("empty", "privasis", "deletes everything", **{key: 5.0})])
    assert [(r["name"], r["rank"]) for r in ranked] == [("a", 1), ("b", 2), ("empty", None)]


def test_frontier_labels_never_overlap():
    ys = spread([100.0, 101.0, 101.5, 300.0, 301.0, 370.0], 12.0, 380.0)
    assert sorted(ys) == sorted(set(ys)) and all(b - a >= 15 for a, b in zip(sorted(ys), sorted(ys)[1:]))
    assert 12.0 <= min(ys) and max(ys) <= 380.0
    fam = _frontier_family()
    rows = rank_rows([_row(f"org/system-{i}", fam, **_pair(fam, 100.0, 60.0 + i * 0.3)) for i in range(8)])
    svg = frontier_chart(rows, FAMILIES.get(fam).board)
    label_ys = [float(y) for y in re.findall(r'<text x="[\d.]+" y="([\d.]+)" class="label', svg)]
    assert len(label_ys) == 8 and all(b - a >= 15 - 1e-6 for a, b in zip(sorted(label_ys), sorted(label_ys)[1:]))


def test_model_arguments_stay_in_the_label():
    spec = {"spec": {"provider": "presidio", "model": "", "args": {"nlp": None}}}
    assert with_arguments("presidio", spec) == "presidio:,nlp=none"
    assert with_arguments("presidio (spaCy x, self-reported)", {"spec": {"provider": "presidio", "args": {
        "operator": "mask"}}}) == "presidio:,operator=mask (spaCy x, self-reported)"
    assert with_arguments("llamacpp:m", {"spec": {"args": {"temperature": 0}}}) == "llamacpp:m,temperature=0"
    assert with_arguments("identity", {"spec": {"args": {}}}) == "identity"


def test_family_prose_comes_from_the_registry_and_names_only_families_with_entries():
    names = [f.name for f in board_families()]
    one = names[0]
    heading = verified_heading({one})
    others = [f for f in board_families() if f.name != one]
    assert all((f.board.prose_name or f.title) not in heading for f in others
               if (f.board.prose_name or f.title) not in (FAMILIES.get(one).board.prose_name or FAMILIES.get(one).title))
    intro = board_intro([{"family": one}])
    assert FAMILIES.get(one).title in intro and "Registered, no entry yet" in intro
    assert all(f.title in intro.split("Registered, no entry yet")[1] for f in others)


def test_downloaded_csv_defuses_formula_cells():
    text = csv_text([{"entry": "=HYPERLINK(\"http://x\")", "value": -1.5, "model": "@sum", "ok": "plain"}])
    assert "'=HYPERLINK" in text and "'@sum" in text and ",-1.5," in text and "plain" in text
