"""Who owns a board entry: the folder is named after the entry, one entry per name and task, first come first served.

* A submission of ``ORG/MODEL`` on task ``T`` lives in ``submissions/ORG__MODEL/T/`` (see
  :func:`~privasis_bench.leaderboard.submit.submission_dir_name`); any other folder is rejected, so a folder cannot
  claim another entry's name.
* One name and task make one entry: a second folder for the same pair is rejected, naming both.
* Identical ``samples.jsonl`` files in two entries are a copy: only the later one is rejected. "Later" is decided by
  the git commit that added each folder's ``submission.json`` (uncommitted folders come after every committed one);
  where git cannot tell (no repository, same commit), by the recorded ``dates.submitted``, then by path.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from privasis_bench.leaderboard.provenance import SUBMISSION_NAME


class _Entry(Protocol):
    path: Path
    submission: dict[str, Any]
    problems: list[str]


def expected_folder(name: str, task: str) -> tuple[str, str]:
    """(entry folder, task folder) a submission named ``name`` on ``task`` must live in."""
    from privasis_bench.leaderboard.submit import submission_dir_name

    return submission_dir_name(name), task


def folder_problems(folder: Path, submission: dict[str, Any]) -> list[str]:
    """Why ``folder`` is not the place of the entry its submission.json names (empty when it is)."""
    name, task = submission.get("name"), (submission.get("task") or {}).get("name")
    try:
        entry_dir, task_dir = expected_folder(str(name), str(task))
    except Exception as exc:  # an invalid name: the same one line submit gives
        return [f"{folder / SUBMISSION_NAME}: name: {exc}"]
    if (folder.parent.name, folder.name) != (entry_dir, task_dir):
        return [f"{folder / SUBMISSION_NAME}: name {name!r} on task {task!r} belongs in {entry_dir}/{task_dir}/, "
                f"not {folder.parent.name}/{folder.name}/ (the folder is derived from the name)"]
    return []


def git_added_time(folder: Path) -> float | None:
    """Unix time of the commit that added ``folder``/submission.json, or None (not in git, or not committed)."""
    path = folder / SUBMISSION_NAME
    try:
        out = subprocess.run(["git", "log", "--diff-filter=A", "--format=%ct", "--", path.name],
                             cwd=folder, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    stamps = [int(s) for s in out.stdout.split() if s.isdigit()] if out.returncode == 0 else []
    return float(min(stamps)) if stamps else None


def arrival_key(entry: _Entry, added: Callable[[Path], float | None] = git_added_time) -> tuple[Any, ...]:
    """Sort key: committed folders by commit time first, then uncommitted ones; ties by recorded date, then path."""
    stamp = added(entry.path)
    submitted = str((entry.submission.get("dates") or {}).get("submitted") or "")
    return (stamp is None, stamp or 0.0, submitted, entry.path.as_posix())


def ownership_problems(entries: Iterable[_Entry], samples_hash: Callable[[Path], str | None],
                       added: Callable[[Path], float | None] = git_added_time) -> None:
    """Add to each entry's problems: a second folder for one name and task, or a later copy of another's samples."""
    ordered = sorted(entries, key=lambda e: arrival_key(e, added))
    owners: dict[tuple[str, str], _Entry] = {}
    by_samples: dict[str, _Entry] = {}
    for entry in ordered:
        if not entry.submission:
            continue
        key = (str(entry.submission.get("name")), str((entry.submission.get("task") or {}).get("name")))
        if key in owners:
            entry.problems.append(f"{entry.path / SUBMISSION_NAME}: {key[0]!r} already has an entry on task {key[1]!r} "
                                  f"at {owners[key].path} (one name and task make one entry)")
        else:
            owners[key] = entry
        digest = samples_hash(entry.path)
        if digest is None:
            continue
        if digest in by_samples:
            first = by_samples[digest]
            entry.problems.append(f"{entry.path / 'samples.jsonl'}: identical to the samples of {first.path}, which "
                                  "came first (a copy of another entry's outputs)")
        else:
            by_samples[digest] = entry
