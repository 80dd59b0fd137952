"""Pull-request mode of `leaderboard verify` (issue 52.3): what a change touches against a base commit, and that the
CLI re-judges exactly those entries while every entry still gets the cheap checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from git_fakes import git

from privasis_bench.leaderboard.changed import ChangeError, changes_since


def _folder(repo: Path, name: str, text: str = "x") -> Path:
    folder = repo / "submissions" / name / "privasis_sample"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.json").write_text(json.dumps({"name": name.replace("__", "/"),
                                                        "task": {"name": "privasis_sample"}}))
    (folder / "samples.jsonl").write_text(text)
    return folder


def _report(repo: Path, rows: list[dict]) -> Path:
    path = repo / "leaderboards" / "rejudge.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"format": "privasis-bench/verify-report/1", "rejudge_seed": 1, "entries": rows}))
    return path


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    for i in range(5):
        _folder(repo, f"org__m{i}")
    _report(repo, [{"name": f"org/m{i}", "task": "privasis_sample", "agreement": {"seed": 7, "agreed": 3}}
                   for i in range(5)])
    (repo / "tasks").mkdir()
    (repo / "tasks" / "privasis_sample.yaml").write_text("judge: a\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


def _folders(repo: Path) -> list[Path]:
    return sorted(p.parent for p in (repo / "submissions").rglob("submission.json"))


def test_nothing_changed_means_nothing_in_full(repo):
    changes = changes_since("main", _folders(repo), repo / "leaderboards" / "rejudge.json")
    assert not changes.entries and not changes.report_rows and not changes.judge_inputs
    assert not any(changes.full(f, {"name": "org/m0", "task": {"name": "privasis_sample"}}) for f in _folders(repo))


def test_a_new_entry_and_an_edited_one_are_in_full_uncommitted_or_not(repo):
    new = _folder(repo, "org__new")
    (repo / "submissions" / "org__m3" / "privasis_sample" / "samples.jsonl").write_text("y")  # not committed
    changes = changes_since("main", _folders(repo))
    assert changes.entries == {new.resolve(), (repo / "submissions" / "org__m3" / "privasis_sample").resolve()}
    git(repo, "checkout", "-q", "-b", "pr")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pr")
    assert changes_since("main", _folders(repo)).entries == changes.entries
    assert changes_since("HEAD", _folders(repo)).entries == set()  # against the new commit: nothing changed


def test_an_extra_file_in_an_entry_folder_is_a_change(repo):
    (repo / "submissions" / "org__m1" / "privasis_sample" / "notes.txt").write_text("hi")
    assert changes_since("main", _folders(repo)).entries == {(repo / "submissions" / "org__m1" / "privasis_sample").resolve()}


def test_a_touched_report_row_puts_its_entry_in_full(repo):
    report = repo / "leaderboards" / "rejudge.json"
    data = json.loads(report.read_text())
    data["entries"][2]["agreement"]["agreed"] = 90  # a hand-edited agreement
    data["rejudge_seed"] = 99  # rows carry their own seed: the file's seed alone touches none
    report.write_text(json.dumps(data))
    changes = changes_since("main", _folders(repo), report)
    assert changes.report_rows == {("org/m2", "privasis_sample")} and not changes.entries
    sub = {"name": "org/m2", "task": {"name": "privasis_sample"}}
    assert changes.full(repo / "submissions" / "org__m2" / "privasis_sample", sub)
    del data["entries"][2]["agreement"]["seed"]  # now the row depends on the file's seed: a changed row
    data["entries"][4]["agreement"].pop("seed")
    report.write_text(json.dumps(data))
    assert changes_since("main", _folders(repo), report).report_rows == {("org/m2", "privasis_sample"),
                                                                         ("org/m4", "privasis_sample")}


def test_a_changed_judge_input_puts_every_entry_in_full(repo):
    (repo / "tasks" / "privasis_sample.yaml").write_text("judge: b\n")
    changes = changes_since("main", _folders(repo))
    assert changes.judge_inputs == ("tasks/privasis_sample.yaml",)
    assert all(changes.full(f, {}) for f in _folders(repo))


def test_an_unknown_ref_or_no_repository_fails_closed(repo, tmp_path):
    with pytest.raises(ChangeError, match="git does not know this commit"):
        changes_since("no-such-branch", _folders(repo))
    loose = tmp_path / "loose"
    loose.mkdir()
    with pytest.raises(ChangeError, match="not inside a git repository"):
        changes_since("main", [loose])
