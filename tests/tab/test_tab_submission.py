"""TAB on the shared submission path: submitted, verified, hashed, owned and built like every entry; submit refuses
what verify would refuse; ties and the board's wording."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from leaderboard_fakes import invoke

from privasis_bench.leaderboard.build import board_rows, build_board
from privasis_bench.leaderboard.page import _agreement
from privasis_bench.leaderboard.rows import rank_rows
from privasis_bench.leaderboard.submit import SubmissionError, submit_run


@pytest.fixture(scope="module")
def tab_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tabrun") / "run"
    invoke("run", "-m", "regex-scrubber", "-t", "tab_sample", "--no-progress", "--no-cache", "-o", str(out))
    return out


#: The TAB sample entries the seed script makes (leaderboards/seed_board.sh).
SEEDED_TAB = {"baselines/identity", "baselines/regex-scrubber", "microsoft/presidio", "microsoft/presidio-mask",
              "microsoft/presidio-synthetic", "spacy/ner-masker", "datafog/datafog-regex"}


def test_the_committed_tab_entries_verify_with_provenance_and_owner(committed_verdicts):
    outcomes = [v for v in committed_verdicts if v.family == "tab"]
    assert {v.submission["name"] for v in outcomes} == SEEDED_TAB
    for v in outcomes:
        assert v.ok, v.problems
        sub = v.submission
        assert sub["owner"] == sub["name"].split("/")[0] and set(sub["files"]) == {"results.json", "samples.jsonl"}
        assert sub["schema_versions"]["samples"] == "tab-samples-row-1" and sub["track"] == "verified"
        assert v.facts()["partial"] is False and v.facts()["records_of_task"] == 10


def test_submit_refuses_what_verify_would_refuse_and_writes_nothing(tab_run, tmp_path):
    run = Path(shutil.copytree(tab_run, tmp_path / "run"))
    samples = run / "tab_sample" / "samples.jsonl"
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    rows[0]["masked_spans"] = [[0, 5]]  # a span the output does not show masked
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(SubmissionError, match="refusing what leaderboard verify would refuse: .*document"):
        submit_run(run, "me/forged", track="verified", root=tmp_path / "subs")
    assert not (tmp_path / "subs").exists()


def test_a_tab_run_goes_through_submit_verify_and_build_onto_the_page(tab_run, tmp_path):
    subs = tmp_path / "subs"
    (folder,) = submit_run(tab_run, "me/scrubber", track="verified", label="mine", root=subs)
    assert (folder / "submission.json").is_file()
    files = build_board(subs, tmp_path / "board")
    assert files.rejected == ()
    html = files.html.read_text(encoding="utf-8")
    assert "<option value='tab_sample'>tab_sample</option>" in html and "data-family='tab'" in html
    assert "Token recall" in html and "tab.md" not in html
    readme = files.markdown.read_text(encoding="utf-8")
    assert "| rank | entry | documents | Token recall |" in readme
    assert [p.name for p in files.viewers] == ["me__scrubber__tab_sample.html"]
    assert "back to the board" in files.viewers[0].read_text(encoding="utf-8")


def test_ties_on_the_headline_share_a_rank_and_say_so():
    def row(name, value):
        return {"family": "tab", "name": name, "task": "t", "track": "verified", "record_set": "s", "partial": False,
                "records": 10, "rankable": True, "token_recall": value}

    ranked = {r["name"]: r for r in rank_rows([row("a", 0.5), row("b", 0.5), row("c", 0.4)])}
    assert (ranked["a"]["rank"], ranked["a"]["tied"]) == (1, True) and ranked["b"]["rank"] == 1
    assert (ranked["c"]["rank"], ranked["c"]["tied"]) == (3, False)


def test_nothing_re_asked_is_never_shown_as_agreement():
    assert _agreement({"judge": "llamacpp:smollm2", "agreed": 0, "asked": 0}) == ("re-judge: nothing re-asked", "tag warn")
    assert _agreement({"judge": "j", "agreed": 9, "asked": 10}) == ("re-judge 9/10 agree", "tag ok")


def test_the_committed_board_rows_of_both_families(committed_verdicts):
    rows = board_rows([v for v in committed_verdicts if v.ok], {})
    tab = [r for r in rows if r["family"] == "tab"]
    ranks = [r["rank"] for r in tab if not r.get("degenerate")]
    assert len(tab) == len(SEEDED_TAB) and ranks[0] == 1 and ranks == sorted(ranks)
    apart = [r for r in tab if r.get("degenerate")]  # identity changes nothing: last, never ranked
    assert apart and tab[-len(apart):] == apart and all(r["rank"] is None for r in apart)
    assert all(r["task"] != "overall" for r in tab)  # "overall" pools judged tasks only


def test_submit_refuses_a_second_task_under_a_name_another_owner_holds(tab_run, tmp_path):
    subs = tmp_path / "subs"
    submit_run(tab_run, "org/x", track="verified", root=subs, owner="alice")
    with pytest.raises(SubmissionError, match="belongs to owner 'alice'"):
        submit_run(tab_run, "org/x", track="verified", root=subs, owner="mallory", replace=True)
    with pytest.raises(SubmissionError, match="--owner"):
        submit_run(tab_run, "org/y", root=subs, owner="<b>")
