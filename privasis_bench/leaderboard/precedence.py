"""When things reached the base branch: when each folder first held each content (its samples' scored content,
:mod:`.scored_content`), read from the base branch's git history (each folder's addition: :mod:`.base_branch`).

Precedence on the board follows these dates, never a folder's age or a date a submitter wrote: a folder on the base
branch that takes another entry's outputs in an update first held that content *after* the entry it copied.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Collection

from privasis_bench.leaderboard.bounds import MAX_JSON_BYTES, MAX_SAMPLES_BYTES
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME

BASE_REF_ENV = "PRIVASIS_BENCH_BASE_REF"
_BASE_CANDIDATES = ("origin/HEAD", "origin/main", "main", "master")
#: At most this many samples versions are read from history (older ones beyond it are not consulted).
MAX_VERSIONS = 2000


def git(args: list[str], cwd: Path) -> str | None:
    """stdout of ``git args`` in ``cwd``, or None when git fails."""
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
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


def read_objects(root: Path, names: list[str], limit: int = MAX_JSON_BYTES) -> dict[str, bytes | None]:
    """The bytes of each git object name (a blob id or ``commit:path``) in one ``git cat-file --batch``; None for a
    missing object or one over ``limit`` bytes."""
    names = list(dict.fromkeys(n for n in names if n and "\n" not in n))
    if not names:
        return {}
    try:
        out = subprocess.run(["git", "cat-file", "--batch"], cwd=root, input="".join(n + "\n" for n in names).encode(),
                             capture_output=True, timeout=300, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return {n: None for n in names}
    found: dict[str, bytes | None] = {}
    pos = 0
    for name in names:
        end = out.find(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:  # "<name> missing"
            found[name] = None
            continue
        size = int(header[2])
        data, pos = out[pos:pos + size], pos + size + 1
        found[name] = data if size <= limit else None
    return found


def _text(data: bytes | None) -> str | None:
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


def sample_versions(root: Path, ref: str, *, renames: bool = True,
                    folders: Collection[str] | None = None) -> list[tuple[int, str, str]]:
    """(position of its commit in ``ref``'s history, commit, folder) of every version of a samples file the history
    adds or changes, oldest first: the first :data:`MAX_VERSIONS` (of ``folders`` only, when given)."""
    log = git(["log", ref, "--reverse", "--format=@%H", "--name-only", "--diff-filter=AM",
               *(() if renames else ("--no-renames",)), "--", "."], root) or ""
    found: list[tuple[int, str, str]] = []
    position, commit = 0, None
    for line in log.splitlines():
        if line.startswith("@"):
            commit, position = line[1:], position + 1
        elif line.endswith("/" + SAMPLES_NAME) and commit is not None and len(found) < MAX_VERSIONS:
            rel = line[: -len(SAMPLES_NAME) - 1]
            if folders is None or rel in folders:
                found.append((position, commit, rel))
    return found


def version_digests(root: Path, versions: list[tuple[int, str, str]]) -> dict[tuple[str, str], str]:
    """(commit, folder) -> the scored-content digest of that samples version (one that cannot be read is left out)."""
    samples = read_objects(root, [f"{c}:{rel}/{SAMPLES_NAME}" for _, c, rel in versions], MAX_SAMPLES_BYTES)
    results = read_objects(root, [f"{c}:{rel}/{RESULTS_NAME}" for _, c, rel in versions], MAX_JSON_BYTES)
    found = {}
    for _, commit, rel in versions:
        text = _text(samples.get(f"{commit}:{rel}/{SAMPLES_NAME}"))
        digest = None if text is None else version_digest(text, _text(results.get(f"{commit}:{rel}/{RESULTS_NAME}")))
        if digest is not None:
            found[(commit, rel)] = digest
    return found


def content_history(folders: list[Path]) -> dict[Path, dict[str, int]]:
    """For each folder on the base branch: content digest -> the position (in base-branch history, oldest first) of
    the first commit where that folder's samples held that content."""
    if not folders:
        return {}
    cwd = folders[0] if folders[0].is_dir() else Path.cwd()
    top, ref = git(["rev-parse", "--show-toplevel"], cwd), base_ref(cwd)
    if top is None or ref is None:
        return {}
    root = Path(top.strip()).resolve()
    wanted = {rel: folder for folder in folders if (rel := relative(folder, root)) is not None}
    versions = sample_versions(root, ref, folders=wanted)
    digests = version_digests(root, versions)
    history: dict[Path, dict[str, int]] = {}
    for position, commit, rel in versions:
        if (commit, rel) in digests:
            history.setdefault(wanted[rel], {}).setdefault(digests[(commit, rel)], position)
    return history


def relative(folder: Path, root: Path) -> str | None:
    """``folder`` relative to the repository ``root`` (None when it lies outside)."""
    try:
        return folder.resolve().relative_to(root).as_posix()
    except ValueError:
        return None
