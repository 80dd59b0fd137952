"""Disclosure (issue 50.7): per owner, entries submitted, updated and withdrawn on the base branch's history, read
from git (one step per change merged), and the self-reported fields of a board row."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from git_fakes import commit, git

from privasis_bench.leaderboard.disclosure import (
    TRACK_NOTE,
    board_disclosure,
    disclosure_markdown,
    entry_anchor,
    self_reported_fields,
    with_disclosure,
)
from privasis_bench.leaderboard.history import History, OwnerActivity, activity


def _entry(subs: Path, folder: str, owner: str, samples: str = "1") -> Path:
    path = subs / folder / "privasis_sample"
    path.mkdir(parents=True, exist_ok=True)
    (path / "submission.json").write_text(json.dumps({"name": folder.replace("__", "/"), "owner": owner}))
    (path / "samples.jsonl").write_text(samples)
    return path



@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVASIS_BENCH_BASE_REF", "main")
    repo = tmp_path / "repo"
    subs = repo / "submissions"
    _entry(subs, "acme__a", "acme")
    _entry(subs, "globex__b", "globex")
    (repo / "README.md").write_text("x")
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "two entries")
    _entry(subs, "acme__a", "acme", "2")
    commit(repo, "acme updates a")
    shutil.rmtree(subs / "globex__b")
    commit(repo, "globex withdraws b")
    return repo


def test_counts_follow_the_base_branch_history(repo):
    got = activity(repo / "submissions")
    assert (got.owners, got.steps) == (
        (OwnerActivity("acme", submitted=1, updated=1), OwnerActivity("globex", submitted=1, withdrawn=1)), 3)


def test_a_merged_change_is_one_step_and_the_working_tree_is_the_last(repo):
    subs = repo / "submissions"
    git(repo, "checkout", "-q", "-b", "pr")
    for text in ("3", "4"):  # two commits of one pull request ...
        _entry(subs, "acme__a", "acme", text)
        commit(repo, f"acme update {text}")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "pr", "-m", "merge")  # ... merged: one update on the base branch
    got = activity(subs)
    assert got.owners[0] == OwnerActivity("acme", submitted=1, updated=2)
    _entry(subs, "acme__c", "acme")  # a pending change (what a pull request's build shows) is the last step
    assert activity(subs).owners[0] == OwnerActivity("acme", submitted=2, updated=2) and activity(subs).steps == 5


def test_each_entry_folder_keeps_its_own_events_by_step(repo):
    """Issue 54: a row's "history" link points at its own entry's line. A pending change is numbered as the step it
    becomes when merged, so committing the rebuilt board does not change the numbers."""
    subs = repo / "submissions"
    got = {e.folder: e.events for e in activity(subs).entries}
    assert got == {"acme__a/privasis_sample": ((1, "submitted"), (2, "updated")),
                   "globex__b/privasis_sample": ((1, "submitted"), (3, "withdrawn"))}
    _entry(subs, "acme__a", "acme", "7")
    pending = {e.folder: e.events for e in activity(subs).entries}["acme__a/privasis_sample"]
    commit(repo, "acme updates a again")
    assert pending == {e.folder: e.events for e in activity(subs).entries}["acme__a/privasis_sample"]
    assert pending[-1] == (4, "updated")
    data = board_disclosure(activity(subs), [])
    page = with_disclosure("<html><body></body></html>", data)
    assert f"id='{entry_anchor('acme__a/privasis_sample')}'" in page and "updated (step 4)" in page
    assert "| acme\\_\\_a/privasis\\_sample | submitted (step 1), updated (step 2), updated (step 4) |" in (
        disclosure_markdown(data))


def test_the_owner_counted_is_the_steps_own_record(repo):
    """A stranger's copy cannot charge a withdrawal to someone else: a withdrawal counts for the owner the deleted
    submission.json named, an update for the one the updated file names."""
    _entry(repo / "submissions", "acme__a", "mallory", "9")
    commit(repo, "an owner change (refused by verify in CI; counted as what it says)")
    owners = {o.owner: o for o in activity(repo / "submissions").owners}
    assert owners["mallory"].updated == 1 and owners["globex"].withdrawn == 1


def test_no_git_means_nothing_is_claimed(tmp_path):
    _entry(tmp_path / "subs", "acme__a", "acme")
    assert activity(tmp_path / "subs") == History()
    data = board_disclosure(activity(tmp_path / "subs"), [])
    assert data["activity"] == {"steps": 0, "owners": [], "entries": []}
    assert "the counts are unknown" in disclosure_markdown(data)


def test_self_reported_fields_of_a_row_and_the_page_section(repo):
    row = {"name": "acme/a", "task": "privasis_sample", "track": "self-reported", "label": "note", "model": "m",
           "harness_version": "0.1.0", "tokens": None, "self_reported": ["cut judge answers: checked only on a sample"]}
    assert self_reported_fields(row) == ["label", "model", "harness_version", TRACK_NOTE,
                                         "cut judge answers: checked only on a sample"]
    data = board_disclosure(activity(repo / "submissions"), [row, {**row, "task": "overall"}])
    assert [r["task"] for r in data["self_reported"]] == ["privasis_sample"]
    page = with_disclosure("<html><body><p>board</p></body></html>", data)
    assert page.index("id='disclosure'") < page.index("</body>") and "<td>globex</td>" in page
    assert "| acme | 1 | 1 | 0 |" in disclosure_markdown(data)


def test_a_hostile_owner_in_the_history_is_escaped_on_the_page_and_in_markdown(repo):
    """History counts owners of any blob the base branch ever held, also one that never passed verify."""
    hostile = "<img src=x onerror=alert(1)>|[x](javascript:alert(1))"
    _entry(repo / "submissions", "acme__a", hostile, "5")
    commit(repo, "a hostile owner string")
    hostile_dir = repo / "submissions" / "x<img src=x onerror=alert(2)>"
    (hostile_dir / "t").mkdir(parents=True)
    (hostile_dir / "t" / "submission.json").write_text(json.dumps({"name": "x/y", "owner": "x"}))
    commit(repo, "a hostile folder name")
    data = board_disclosure(activity(repo / "submissions"), [])
    page = with_disclosure("<html><body></body></html>", data)
    assert "<img" not in page and "&lt;img" in page and "alert(2)" in page
    text = disclosure_markdown(data)
    assert "<img" not in text.replace("\\<img", "") and "](javascript" not in text.replace("\\](javascript", "")
    row = next(line for line in text.splitlines() if "img" in line)
    assert len(re.findall(r"(?<!\\)\|", row)) == 5  # the owner cannot end its cell early
