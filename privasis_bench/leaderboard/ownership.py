"""Who owns a board entry, decided only by what the repository already holds.

* A submission of ``ORG/MODEL`` on task ``T`` lives in ``submissions/<folder of ORG/MODEL>/T/`` (the mapping of
  :mod:`.naming`, one-to-one and reversible); any other folder is rejected.
* Names are compared folded (NFKC, case, punctuation): one folded name and task make one entry.
* Two entries whose samples have the same *content* (canonical JSON of the rows, in record order; new bytes for the
  same rows do not make a new entry) are one set of outputs.
* Who keeps a contested name or set of outputs: an entry that is already on the base branch (``$PRIVASIS_BENCH_BASE_REF``,
  else ``origin/HEAD``, ``origin/main``, ``main``, ``master``: the first that exists). Every contender that is not on the
  base branch is rejected, whatever dates or folder names it records; two new contenders are both rejected. Where
  two entries on the base branch contend (history), the one the base branch added first keeps it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from privasis_bench.leaderboard.naming import folded, submission_dir_name
from privasis_bench.leaderboard.provenance import SUBMISSION_NAME

BASE_REF_ENV = "PRIVASIS_BENCH_BASE_REF"
_BASE_CANDIDATES = ("origin/HEAD", "origin/main", "main", "master")


class _Entry(Protocol):
    path: Path
    submission: dict[str, Any]
    problems: list[str]
    content: str | None


def content_digest(rows: Iterable[dict[str, Any]]) -> str:
    """sha256 of the rows as canonical JSON (sorted keys, no spaces, one row a line): the same rows, the same digest."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def expected_folder(name: str, task: str) -> tuple[str, str]:
    """(entry folder, task folder) a submission named ``name`` on ``task`` must live in."""
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


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def base_ref(cwd: Path) -> str | None:
    """The base branch precedence is read from (see the module docstring), or None outside git."""
    wanted = os.environ.get(BASE_REF_ENV)
    for ref in ([wanted] if wanted else list(_BASE_CANDIDATES)):
        if _git(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], cwd) is not None:
            return ref
    return None


def on_base_branch(folders: list[Path]) -> dict[Path, int]:
    """The folders whose submission.json the base branch holds, each with its order of addition there (0 first)."""
    if not folders:
        return {}
    cwd = folders[0] if folders[0].is_dir() else Path.cwd()
    top, ref = _git(["rev-parse", "--show-toplevel"], cwd), base_ref(cwd)
    if top is None or ref is None:
        return {}
    root = Path(top.strip()).resolve()
    listed = _git(["ls-tree", "-r", "--name-only", ref], root) or ""
    held = {line for line in listed.splitlines() if line.endswith("/" + SUBMISSION_NAME) or line == SUBMISSION_NAME}
    added: dict[str, int] = {}
    log = _git(["log", ref, "--reverse", "--diff-filter=A", "--name-only", "--format=", "--", "."], root) or ""
    for line in log.splitlines():
        if line in held:
            added.setdefault(line, len(added))
    found = {}
    for folder in folders:
        try:
            rel = (folder.resolve() / SUBMISSION_NAME).relative_to(root).as_posix()
        except ValueError:
            continue
        if rel in held:
            found[folder] = added.get(rel, len(held))
    return found


def _settle(groups: dict[Any, list[_Entry]], base: dict[Path, int], say: Callable[[_Entry, _Entry | None, list[_Entry]], str]) -> None:
    for group in groups.values():
        if len(group) < 2:
            continue
        kept = sorted((e for e in group if e.path in base), key=lambda e: (base[e.path], e.path.as_posix()))
        owner = kept[0] if kept else None
        for entry in group:
            if entry is not owner:
                entry.problems.append(say(entry, owner, [e for e in group if e is not entry]))


def ownership_problems(entries: Iterable[_Entry], base: dict[Path, int] | None = None) -> None:
    """Add to each entry's problems: a name or a set of outputs another entry owns (or contests, when both are new)."""
    entries = [e for e in entries if e.submission]
    base = on_base_branch([e.path for e in entries]) if base is None else base
    by_name: dict[tuple[str, str], list[_Entry]] = {}
    by_content: dict[str, list[_Entry]] = {}
    for entry in entries:
        task = str((entry.submission.get("task") or {}).get("name"))
        by_name.setdefault((folded(str(entry.submission.get("name"))), task), []).append(entry)
        if getattr(entry, "content", None):
            by_content.setdefault(entry.content, []).append(entry)

    def name_line(entry: _Entry, owner: _Entry | None, others: list[_Entry]) -> str:
        task = (entry.submission.get("task") or {}).get("name")
        if owner is not None:
            return (f"{entry.path / SUBMISSION_NAME}: name {entry.submission.get('name')!r} on task {task!r} is the entry "
                    f"of {owner.path} ({owner.submission.get('name')!r}, already on the base branch; names are compared "
                    "ignoring case, punctuation and Unicode width)")
        return (f"{entry.path / SUBMISSION_NAME}: name {entry.submission.get('name')!r} on task {task!r} is also claimed by "
                f"{', '.join(str(o.path) for o in others)} (names compared ignoring case and punctuation; neither is on the "
                "base branch, so both are rejected)")

    def content_line(entry: _Entry, owner: _Entry | None, others: list[_Entry]) -> str:
        if owner is not None:
            return (f"{entry.path / 'samples.jsonl'}: the same samples as {owner.path}, which is already on the base "
                    "branch (a copy of another entry's outputs)")
        return (f"{entry.path / 'samples.jsonl'}: the same samples as {', '.join(str(o.path) for o in others)} "
                "(a copy of another entry's outputs; neither is on the base branch, so both are rejected)")

    _settle(by_name, base, name_line)
    _settle(by_content, base, content_line)
