"""Issue 50.6, the smaller gaps: a verified ``overall`` row pooling a self-reported task of the same owner; ASCII
look-alike names that did not fold (``8/B``, ``5/S``, ``2/Z``, ``6/b``); a back-end detail (a spaCy model name) shown
as if the verifier had checked it."""

from __future__ import annotations

from pathlib import Path

import pytest

from privasis_bench.leaderboard.build import overall_groups
from privasis_bench.leaderboard.families.privasis_row import entry_row
from privasis_bench.leaderboard.naming import folded
from privasis_bench.leaderboard.verify import Verified


@pytest.mark.parametrize("genuine,lookalike", [
    ("acme/llama-8b", "acme/llama-Bb"), ("acme/s5", "acme/SS"), ("acme/z2", "acme/ZZ"), ("acme/m6", "acme/mb"),
    ("acme8/x", "acmeB/x"), ("acme/model-2", "acme/model-z"),
])
def test_digit_letter_look_alikes_fold_together(genuine, lookalike):
    assert folded(genuine) == folded(lookalike)
    assert folded("acme/llama-8b") != folded("acme/llama-7b")


def _entry(name, task, track):
    return Verified(path=Path(f"/x/{name}/{task}"), family="privasis",
                    submission={"name": name, "track": track, "task": {"name": task}})


def test_a_verified_overall_never_pools_a_self_reported_task_of_the_same_owner():
    verified = [_entry("org/m", "privasis_sample", "verified"), _entry("org/m", "privasis_vanilla", "verified")]
    own_claim = _entry("org/m", "privasis_hard", "self-reported")
    groups = overall_groups([*verified, own_claim])
    assert [[v.submission["task"]["name"] for v in g] for g in groups] == [["privasis_sample", "privasis_vanilla"]]
    assert all(v.submission["track"] == "verified" for g in groups for v in g)
    lone = overall_groups([verified[0], own_claim])
    assert lone == []  # one verified task and one self-reported: no overall row mixes them


def test_a_back_end_named_by_the_submission_is_marked_self_reported():
    from adversarial_kit import REPO, read_json

    folder = REPO / "submissions" / "microsoft__presidio" / "privasis_sample"
    v = Verified(path=folder, family="privasis", submission=read_json(folder / "submission.json"),
                 results=read_json(folder / "results.json"))
    row = entry_row(v, "privasis_sample", v.results["metrics"], None)
    assert "(spaCy " in row["model"] and row["model"].endswith(", self-reported)")
