"""Attack class *precedence*: who keeps a set of outputs or a name follows when the content reached the base branch
(its git history), never a folder's age, a folder name or a date the submitter wrote."""

from __future__ import annotations

import shutil

import pytest
from adversarial_kit import commit_all, entry_as, outcomes

P, T = "privasis_sample", "tab_sample"


@pytest.fixture(autouse=True)
def _no_ci_env(monkeypatch):
    monkeypatch.delenv("PRIVASIS_BENCH_BASE_REF", raising=False)
    monkeypatch.delenv("PRIVASIS_BENCH_SUBMITTER", raising=False)


def test_an_older_folder_taking_a_newer_entrys_outputs_is_the_copy(tmp_path):
    """Issue 41: an older folder on the base branch took a newer entry's outputs in an update, and the genuine
    (newer) entry was the one rejected."""
    subs = tmp_path / "submissions"
    old = entry_as(subs, "baselines__regex-scrubber", T, "aaa/old")
    commit_all(subs, "an old entry")
    genuine = entry_as(subs, "microsoft__presidio", T, "zzz/genuine")
    commit_all(subs, "a newer, genuine entry")
    for name in ("results.json", "samples.jsonl"):  # the old folder's update takes the genuine outputs
        shutil.copy(genuine / name, old / name)
    shutil.copy(genuine / "submission.json", old / "submission.json")
    sub = __import__("adversarial_kit").read_json(old / "submission.json")
    sub["name"], sub["owner"] = "aaa/old", "aaa"
    (old / "submission.json").write_text(__import__("json").dumps(sub), encoding="utf-8")
    got = outcomes(subs)
    assert got[genuine].ok, got[genuine].problems
    assert any("the same samples as" in p and "held them there first" in p for p in got[old].problems)


def test_the_first_name_added_on_the_base_branch_keeps_it(tmp_path):
    subs = tmp_path / "submissions"
    first = entry_as(subs, "baselines__identity", P, "org/model")
    commit_all(subs, "first")
    later = entry_as(subs, "baselines__regex-scrubber", T, "org/rnodel", owner="org")  # rn looks like m
    commit_all(subs, "a look-alike, merged later (history)")
    got = outcomes(subs)
    assert got[first].ok
    assert any("is the name 'org/model'" in p for p in got[later].problems)


def test_a_backdated_copy_not_on_the_base_branch_loses(tmp_path):
    subs = tmp_path / "submissions"
    genuine = entry_as(subs, "microsoft__presidio", T, "microsoft/presidio")
    commit_all(subs, "genuine")
    copy = entry_as(subs, "microsoft__presidio", T, "aaa/early-bird")
    sub = __import__("adversarial_kit").read_json(copy / "submission.json")
    sub["dates"]["submitted"] = "2001-01-01T00:00:00+00:00"
    (copy / "submission.json").write_text(__import__("json").dumps(sub), encoding="utf-8")
    got = outcomes(subs)
    assert got[genuine].ok and any("the same samples as" in p for p in got[copy].problems)
