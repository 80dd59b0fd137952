"""`leaderboard verify --changed-since REF` through the CLI: the re-judge is spent only on entries new or changed
against REF, every entry still gets the cheap checks, and a change to an existing entry does not escape."""

from __future__ import annotations

import json
import shutil

import pytest
from git_fakes import git
from leaderboard_fakes import identity_dir, invoke, scrubber_dir

import privasis_bench.cli.leaderboard_cmds as cmds
from privasis_bench.leaderboard.provenance import sha256_file
from privasis_bench.results.files import dumps_json


@pytest.fixture
def repo(made, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.delenv("PRIVASIS_BENCH_BASE_REF", raising=False)
    monkeypatch.delenv("PRIVASIS_BENCH_SUBMITTER", raising=False)
    repo = tmp_path / "repo"
    shutil.copytree(made["submissions"], repo / "submissions")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: two verified entries")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


@pytest.fixture
def asked(monkeypatch):
    """The folders the CLI re-judges (the judge itself is not the point here)."""
    seen = []
    monkeypatch.setattr(cmds, "rejudged", lambda v, *a, **k: seen.append(v.path.name and v.path.parent.name))
    return seen


def _verify(repo, *extra, expect=0):
    return invoke("leaderboard", "verify", str(repo / "submissions"), "--rejudge", "5", "--judge", "llamacpp:smollm2",
                  *extra, expect=expect).output


def test_full_mode_rejudges_every_entry_and_pr_mode_only_the_changed_one(repo, asked):
    _verify(repo)
    assert sorted(asked) == ["baselines__identity", "baselines__regex-scrubber"]
    asked.clear()
    out = _verify(repo, "--changed-since", "main")
    assert asked == [] and "0 of 2 entries verified in full" in out and "unchanged since main" in out
    folder = identity_dir(repo / "submissions")  # an update of an existing entry: re-judged
    sub = json.loads((folder / "submission.json").read_text())
    sub["label"] = "an update"
    (folder / "submission.json").write_text(dumps_json(sub))
    out = _verify(repo, "--changed-since", "main")
    assert asked == ["baselines__identity"] and "1 of 2 entries verified in full" in out


def test_the_cheap_checks_still_run_on_unchanged_entries(repo, asked):
    folder = scrubber_dir(repo / "submissions")
    res = json.loads((folder / "results.json").read_text())
    res["metrics"]["headline"]["sanitization_attribute"] = 99.0
    (folder / "results.json").write_text(dumps_json(res))
    sub = json.loads((folder / "submission.json").read_text())
    sub["files"]["results.json"] = sha256_file(folder / "results.json")
    (folder / "submission.json").write_text(dumps_json(sub))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "forged numbers")
    # against the forged commit itself nothing "changed", but the recompute still rejects the entry
    out = _verify(repo, "--changed-since", "HEAD", expect=1)
    assert "FAIL" in out and "results.json says" in out and asked == []
