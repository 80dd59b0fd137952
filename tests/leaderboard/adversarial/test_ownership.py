"""Attack class *ownership*: who may add entries under a name, and when two entries are one set of outputs."""

from __future__ import annotations

import pytest
from adversarial_kit import commit_all, entry_as, outcomes, rewrite, rows_of

from privasis_bench.leaderboard.naming import folded

P, T = "privasis_sample", "tab_sample"


@pytest.fixture(autouse=True)
def _no_ci_env(monkeypatch):
    monkeypatch.delenv("PRIVASIS_BENCH_BASE_REF", raising=False)
    monkeypatch.delenv("PRIVASIS_BENCH_SUBMITTER", raising=False)


def test_a_name_belongs_to_whoever_first_added_any_task_under_it(tmp_path, monkeypatch):
    """Issue 41: a third party submitted `org/x` on a task of its own and the pooled row mixed both."""
    subs = tmp_path / "submissions"
    genuine = entry_as(subs, "baselines__regex-scrubber", P, "baselines/regex-scrubber")
    commit_all(subs, "the genuine entry")
    intruder = entry_as(subs, "baselines__regex-scrubber", T, "baselines/regex-scrubber", owner="mallory")
    got = outcomes(subs)
    assert got[genuine].ok
    assert any("belongs to owner 'baselines', who first added a task under it" in p for p in got[intruder].problems)
    sub = __import__("adversarial_kit").read_json(intruder / "submission.json")
    sub["owner"] = "baselines"  # the name's owner adds a second task: accepted
    rewrite(intruder, sub=sub)
    assert outcomes(subs)[intruder].ok
    monkeypatch.setenv("PRIVASIS_BENCH_SUBMITTER", "mallory")  # ... unless CI sees someone else pushing it
    assert any("is not the submitter 'mallory'" in p for p in outcomes(subs)[intruder].problems)
    assert outcomes(subs)[genuine].ok  # already on the base branch: not re-checked against the submitter


def test_two_new_entries_under_one_name_with_different_owners_are_both_rejected(tmp_path):
    subs = tmp_path / "submissions"
    a = entry_as(subs, "baselines__identity", P, "org/x", owner="alice")
    b = entry_as(subs, "baselines__identity", T, "org/x", owner="bob")
    got = outcomes(subs)
    for folder in (a, b):
        assert any("is also claimed by" in p and "another spelling or owner" in p for p in got[folder].problems)


@pytest.mark.parametrize("lookalike", ["basel1nes/regex-scrubber", "baselines/regex-scrubber", "BaseIines/Regex.Scrubber",
                                       "baselines/regex-scrubbcr"])
def test_look_alike_names_fold_together(tmp_path, lookalike):
    same = lookalike != "baselines/regex-scrubbcr"
    assert (folded(lookalike) == folded("baselines/regex-scrubber")) is same
    if lookalike == "baselines/regex-scrubber":
        return
    subs = tmp_path / "submissions"
    entry_as(subs, "baselines__regex-scrubber", P, "baselines/regex-scrubber")
    commit_all(subs, "genuine")
    copy = entry_as(subs, "baselines__regex-scrubber", T, lookalike, owner="mallory")
    problems = outcomes(subs)[copy].problems
    assert any("is the name 'baselines/regex-scrubber'" in p for p in problems) is same


def test_unknown_fields_cannot_make_a_copy_new_content(tmp_path):
    """Issue 41: one unknown field in one row made a copy "new content". Both families."""
    subs = tmp_path / "submissions"
    for source, task in (("microsoft__presidio", T), ("baselines__identity", P)):
        original = entry_as(subs, source, task, f"{source.split('__')[0]}/{source.split('__')[1]}")
        copy = entry_as(subs, source, task, f"mallory/copy-{task.split('_')[0]}")
        rows = rows_of(copy)
        for n, row in enumerate(rows):
            row["padding"] = f"new content {n}"  # unknown to the board, never scored
        rows.reverse()
        rewrite(copy, rows=rows)
        got = outcomes(subs)
        assert any("the same samples as" in p for p in got[copy].problems), got[copy].problems
        assert any("the same samples as" in p for p in got[original].problems)  # neither on base: both rejected
