"""Building forged entries inside the tests (nothing forged is shipped): copies of the committed TAB entries and of
the test-made Privasis entries, edited, with submission.json's file hashes made to match so that only the check under
test can catch them."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from privasis_bench.leaderboard.verify import verify_paths, verify_submission
from privasis_bench.results.files import dumps_json

REPO = Path(__file__).resolve().parents[3]
TAB = "tab_sample"


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def rows_of(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def tab_entry(root: Path, entry: str = "baselines__regex-scrubber") -> Path:
    """A fresh copy of a committed TAB entry under ``root/<entry>/tab_sample``."""
    return Path(shutil.copytree(REPO / "submissions" / entry / TAB, root / entry / TAB))


def rewrite(folder: Path, *, results: dict | None = None, rows: list[dict] | None = None, sub: dict | None = None,
            samples_text: str | None = None) -> None:
    """Write the given files and make submission.json's hashes match them (a forger controls every byte)."""
    if results is not None:
        (folder / "results.json").write_text(dumps_json(results), encoding="utf-8")
    if rows is not None:
        samples_text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if samples_text is not None:
        (folder / "samples.jsonl").write_text(samples_text, encoding="utf-8")
    sub = sub if sub is not None else read_json(folder / "submission.json")
    for name in ("results.json", "samples.jsonl"):
        sub["files"][name] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    (folder / "submission.json").write_text(dumps_json(sub), encoding="utf-8")


def problems(folder: Path) -> list[str]:
    return verify_submission(folder).problems


def outcomes(*roots: Path) -> dict[Path, Any]:
    return {v.path: v for v in verify_paths(list(roots))}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def commit_all(cwd: Path, message: str) -> None:
    """Commit everything under ``cwd`` on branch main (a repository is made on first use)."""
    if not (cwd / ".git").exists():
        git(cwd, "init", "-q", "-b", "main")
    git(cwd, "add", "-A")
    git(cwd, "commit", "-qm", message)


def tab_metrics_for(rows: list[dict]) -> dict:
    """What the TAB scorer's pooling gives for ``rows``' own counts (a forger recomputes the numbers to match)."""
    from privasis_bench.tab.scorer import summarize, tallies_from_rows

    return summarize(tallies_from_rows(rows), bootstrap_samples=1000, seed=1234, confidence=0.95)


def entry_as(root: Path, source: str, task: str, name: str, owner: str | None = None) -> Path:
    """A copy of a committed entry (``source`` folder, ``task``) renamed to ``name`` (and ``owner``), hashes kept."""
    from privasis_bench.leaderboard.naming import submission_dir_name

    folder = Path(shutil.copytree(REPO / "submissions" / source / task, root / submission_dir_name(name) / task))
    sub = read_json(folder / "submission.json")
    sub["name"] = name
    if owner is not None:
        sub["owner"] = owner
    elif "owner" in sub:
        sub["owner"] = name.split("/")[0]
    (folder / "submission.json").write_text(dumps_json(sub), encoding="utf-8")
    return folder
