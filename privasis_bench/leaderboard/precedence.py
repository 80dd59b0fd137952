"""When things reached the base branch: when each folder first held each content (its samples' scored content,
:mod:`.scored_content`), read from the base branch's git history (each folder's addition: :mod:`.base_branch`).

Precedence on the board follows these dates, never a folder's age or a date a submitter wrote: a folder on the base
branch that takes another entry's outputs in an update first held that content *after* the entry it copied.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from privasis_bench.leaderboard.bounds import MAX_JSON_BYTES, MAX_SAMPLES_BYTES
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME

BASE_REF_ENV = "PRIVASIS_BENCH_BASE_REF"
_BASE_CANDIDATES = ("origin/HEAD", "origin/main", "main", "master")
#: At most this many samples versions are read from history (older ones beyond it are not consulted).
MAX_VERSIONS = 2000


def git(args: list[str], cwd: Path, *, binary: bool = False) -> Any:
    """stdout of ``git args`` in ``cwd`` (text, or bytes with ``binary``), or None when git fails."""
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=not binary, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def base_ref(cwd: Path) -> str | None:
    """The base branch (``$PRIVASIS_BENCH_BASE_REF``, else origin/HEAD, origin/main, main, master), or None."""
    wanted = os.environ.get(BASE_REF_ENV)
    for ref in ([wanted] if wanted else list(_BASE_CANDIDATES)):
        if git(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], cwd) is not None:
            return ref
    return None


def _root_and_ref(folders: list[Path]) -> tuple[Path, str] | None:
    if not folders:
        return None
    cwd = folders[0] if folders[0].is_dir() else Path.cwd()
    top, ref = git(["rev-parse", "--show-toplevel"], cwd), base_ref(cwd)
    return None if top is None or ref is None else (Path(top.strip()).resolve(), ref)


def _rel(folder: Path, root: Path) -> str | None:
    try:
        return folder.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def _blob(root: Path, commit: str, path: str, limit: int) -> str | None:
    size = git(["cat-file", "-s", f"{commit}:{path}"], root)
    if size is None or not size.strip().isdigit() or int(size) > limit:
        return None
    data = git(["show", f"{commit}:{path}"], root, binary=True)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def version_digest(samples: str, results_text: str | None) -> str | None:
    """The scored-content digest of one historical version (None when it cannot be read)."""
    from privasis_bench.fsutil import loads_json
    from privasis_bench.leaderboard.family_api import family_of

    try:
        results = loads_json(results_text, "results") if results_text else {}
        rows = [loads_json(line, "samples") for line in samples.splitlines() if line.strip()]
        if not isinstance(results, dict) or not all(isinstance(r, dict) for r in rows):
            return None
        return family_of(results).call("content", rows, results)
    except Exception:  # noqa: BLE001 - an unreadable old version simply holds no content
        return None


def content_history(folders: list[Path]) -> dict[Path, dict[str, int]]:
    """For each folder on the base branch: content digest -> the position (in base-branch history, oldest first) of
    the first commit where that folder's samples held that content."""
    found_root = _root_and_ref(folders)
    if found_root is None:
        return {}
    root, ref = found_root
    wanted = {rel: folder for folder in folders if (rel := _rel(folder, root)) is not None}
    log = git(["log", ref, "--reverse", "--format=@%H", "--name-only", "--diff-filter=AM", "--", "."], root) or ""
    history: dict[Path, dict[str, int]] = {}
    position, commit, versions = 0, None, 0
    for line in log.splitlines():
        if line.startswith("@"):
            commit, position = line[1:], position + 1
            continue
        if not line.endswith("/" + SAMPLES_NAME) or commit is None:
            continue
        rel = line[: -len(SAMPLES_NAME) - 1]
        if rel not in wanted or versions >= MAX_VERSIONS:
            continue
        versions += 1
        samples = _blob(root, commit, line, MAX_SAMPLES_BYTES)
        digest = None if samples is None else version_digest(samples, _blob(root, commit, f"{rel}/{RESULTS_NAME}", MAX_JSON_BYTES))
        if digest is not None:
            history.setdefault(wanted[rel], {}).setdefault(digest, position)
    return history
