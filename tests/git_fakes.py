"""Real git repositories made inside tests (a base branch, pull-request branches): one ``git`` runner with a fixed
identity and no user configuration."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path, *args: str) -> None:
    """Run ``git args`` in ``cwd`` (raises on failure)."""
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def commit(repo: Path, message: str) -> None:
    """Commit everything in ``repo``'s working tree."""
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
