"""Attack class *updates* (issue 50.1): changes to entries the base branch holds, made as pull requests on a real git
base branch. The owner of an entry is the one the base branch's blob records; a stranger may not rewrite, take over
or delete it, and a deleted entry's outputs stay held."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from adversarial_kit import REPO, commit_all, entry_as, git, outcomes, read_json, rewrite

T = "tab_sample"


@pytest.fixture
def pr(tmp_path, monkeypatch):
    """A repository whose base branch `main` holds acme/scrubber (two tasks' worth: one TAB entry) and
    globex/masker; the test continues on a pull-request branch `pr`."""
    monkeypatch.setenv("PRIVASIS_BENCH_BASE_REF", "main")
    monkeypatch.delenv("PRIVASIS_BENCH_SUBMITTER", raising=False)
    repo = tmp_path / "repo"
    subs = repo / "submissions"
    entry_as(subs, "baselines__regex-scrubber", T, "acme/scrubber")
    entry_as(subs, "microsoft__presidio", T, "globex/masker")
    commit_all(repo, "base: two entries")
    git(repo, "checkout", "-q", "-b", "pr")
    return subs


def _replace_outputs(folder: Path, source: str, label: str) -> None:
    """The folder keeps its submission.json's name and owner but takes another committed entry's files."""
    kept = read_json(folder / "submission.json")
    for name in ("results.json", "samples.jsonl", "submission.json"):
        shutil.copy(REPO / "submissions" / source / T / name, folder / name)
    sub = read_json(folder / "submission.json")
    sub.update(name=kept["name"], owner=kept["owner"], label=label)
    rewrite(folder, sub=sub)


def test_a_stranger_cannot_rewrite_an_entry_but_its_owner_can(pr, monkeypatch):
    """Issue 50.1: a stranger's pull request relabelled an entry 'WITHDRAWN: fabricated' and replaced its outputs."""
    acme = pr / "acme__scrubber" / T
    _replace_outputs(acme, "spacy__ner-masker", "WITHDRAWN: these results were fabricated by acme")
    commit_all(pr.parent, "a stranger's rewrite")
    monkeypatch.setenv("PRIVASIS_BENCH_SUBMITTER", "mallory")
    got = outcomes(pr)
    assert any("only its owner 'acme' may change" in p and "'mallory'" in p for p in got[acme].problems), got[acme].problems
    assert got[pr / "globex__masker" / T].ok
    monkeypatch.setenv("PRIVASIS_BENCH_SUBMITTER", "acme")  # the owner's own update is accepted
    assert outcomes(pr)[acme].ok, outcomes(pr)[acme].problems


def test_editing_the_owner_field_of_the_first_entry_does_not_take_the_name(pr, monkeypatch):
    """Issue 50.1: the pull request edited the owner of the name's first entry and added a task under the name; the
    owner was read from the pull request's own copy."""
    acme = pr / "acme__scrubber" / T
    sub = read_json(acme / "submission.json")
    sub["owner"] = "mallory"
    rewrite(acme, sub=sub)
    intruder = entry_as(pr, "baselines__regex-scrubber", "privasis_sample", "acme/scrubber", owner="mallory")
    commit_all(pr.parent, "take over acme/scrubber")
    for submitter in (None, "mallory"):  # refused whoever pushes: the owner comes from the base branch's blob
        if submitter:
            monkeypatch.setenv("PRIVASIS_BENCH_SUBMITTER", submitter)
        got = outcomes(pr)
        for folder in (acme, intruder):
            assert any("belongs to owner 'acme'" in p and "as the base branch records it" in p
                       for p in got[folder].problems), (submitter, got[folder].problems)
    assert any("only its owner 'acme' may change" in p for p in got[acme].problems)


def test_a_deleted_entry_stays_owned_and_its_outputs_stay_held(pr, monkeypatch):
    """Issue 50.1: a stranger deleted an entry and submitted its outputs under a name of its own (precedence was lost
    with the deleted folder)."""
    globex = pr / "globex__masker" / T
    copy = entry_as(pr, "microsoft__presidio", T, "mallory/masker")  # globex's outputs, a new name
    shutil.rmtree(globex.parent)
    commit_all(pr.parent, "delete globex, resubmit as mallory")
    monkeypatch.setenv("PRIVASIS_BENCH_SUBMITTER", "mallory")
    got = outcomes(pr)
    assert any("only its owner 'globex' may withdraw" in p for p in got[globex].problems), got
    assert any("which the base branch held under another name" in p for p in got[copy].problems), got[copy].problems
    monkeypatch.setenv("PRIVASIS_BENCH_SUBMITTER", "globex")  # the owner may withdraw ...
    got = outcomes(pr)
    assert globex not in got
    # ... but the withdrawn outputs still cannot reappear under another name (whoever submits them)
    assert any("which the base branch held under another name" in p for p in got[copy].problems)


def test_a_withdrawn_name_stays_held_and_a_rename_is_a_deletion(pr, monkeypatch):
    """After the owner withdrew acme/scrubber on the base branch, a stranger cannot take the name; renaming a
    folder away (git mv) is a deletion of the entry the base branch holds."""
    shutil.rmtree(pr / "acme__scrubber")
    commit_all(pr.parent, "acme withdraws")
    git(pr.parent, "checkout", "-q", "main")
    git(pr.parent, "merge", "-q", "--ff-only", "pr")
    git(pr.parent, "checkout", "-q", "-b", "pr2")
    taker = entry_as(pr, "spacy__ner-masker", T, "acme/scrubber", owner="mallory")
    assert any("belongs to owner 'acme'" in p and "(withdrawn)" in p for p in outcomes(pr)[taker].problems)
    shutil.rmtree(taker.parent)
    git(pr.parent, "mv", "submissions/globex__masker", "submissions/globex__renamed")
    monkeypatch.setenv("PRIVASIS_BENCH_SUBMITTER", "mallory")
    got = outcomes(pr)
    assert any("only its owner 'globex' may withdraw" in p for p in got[pr / "globex__masker" / T].problems)


def test_outputs_an_entry_held_before_its_update_stay_held(pr):
    """The owner of acme/scrubber replaced its outputs on the base branch; its earlier outputs still belong to it."""
    git(pr.parent, "checkout", "-q", "main")
    _replace_outputs(pr / "acme__scrubber" / T, "spacy__ner-masker", "acme's second version")
    commit_all(pr.parent, "acme updates its entry")
    git(pr.parent, "checkout", "-q", "-b", "pr2")
    copy = entry_as(pr, "baselines__regex-scrubber", T, "mallory/scrubber")  # acme's first outputs
    got = outcomes(pr)
    assert any("which the base branch held under another name" in p and "acme__scrubber" in p
               for p in got[copy].problems), got[copy].problems
    assert got[pr / "acme__scrubber" / T].ok and got[pr / "globex__masker" / T].ok
