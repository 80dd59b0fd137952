"""Who owns a board entry, decided only by what the repository already holds (docs/publishing.md, *Ownership*).

* The folder is the name's (:mod:`.naming`'s one-to-one mapping); any other folder is rejected.
* A name (compared folded: :func:`.naming.folded`, across every task and family) belongs to the owner of the first
  submission the base branch added under it, read from the base branch's blob (:mod:`.base_branch`), never the
  change's copy; every entry under it must have that owner and exact spelling. With none on the base branch, new
  entries under one name must agree on both, else all are rejected. In CI, ``$PRIVASIS_BENCH_SUBMITTER`` must own
  every new entry and every base entry the change edits, renames or deletes (:mod:`.updates`).
* Two entries with equal *scored content* (:mod:`.scored_content`) are one set of outputs (one name's own outputs
  under several tasks excepted); the folder that held it first on the base branch keeps it (:mod:`.precedence`),
  every other contender is rejected, and two new contenders both are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Protocol

from privasis_bench.leaderboard.base_branch import BaseView, load_base
from privasis_bench.leaderboard.naming import check_owner, folded, owner_of, submission_dir_name
from privasis_bench.leaderboard.precedence import BASE_REF_ENV, content_history
from privasis_bench.leaderboard.provenance import SUBMISSION_NAME
from privasis_bench.leaderboard.updates import change_problems, held_content_problems, withdrawals

SUBMITTER_ENV = "PRIVASIS_BENCH_SUBMITTER"
__all__ = ["BASE_REF_ENV", "SUBMITTER_ENV", "folder_problems", "ownership_problems"]


class _Entry(Protocol):
    path: Path
    submission: dict[str, Any]
    problems: list[str]
    content: str | None


def folder_problems(folder: Path, submission: dict[str, Any]) -> list[str]:
    """Why ``folder`` is not the place of the entry its submission.json names (empty when it is)."""
    name, task = submission.get("name"), (submission.get("task") or {}).get("name")
    try:
        entry_dir, task_dir = submission_dir_name(str(name)), str(task)
    except Exception as exc:  # an invalid name: the same one line submit gives
        return [f"{folder / SUBMISSION_NAME}: name: {exc}"]
    if (folder.parent.name, folder.name) != (entry_dir, task_dir):
        return [f"{folder / SUBMISSION_NAME}: name {name!r} on task {task!r} belongs in {entry_dir}/{task_dir}/, "
                f"not {folder.parent.name}/{folder.name}/ (the folder is derived from the name)"]
    return []


def _where(entry: _Entry) -> str:
    return str(entry.path / SUBMISSION_NAME)


def _task_of(entry: _Entry) -> str:
    return str((entry.submission.get("task") or {}).get("name"))


def _same_task_problems(group: list[_Entry], base: dict[Path, int]) -> None:
    """One name and task make one entry: a second folder for them is rejected (both, when neither is on base)."""
    by_task: dict[str, list[_Entry]] = {}
    for entry in group:
        by_task.setdefault(_task_of(entry), []).append(entry)
    for task, holders in by_task.items():
        if len(holders) < 2:
            continue
        kept = min((e for e in holders if e.path in base), key=lambda e: (base[e.path], e.path.as_posix()), default=None)
        for entry in holders:
            if entry is kept:
                continue
            others = ", ".join(str(o.path) for o in holders if o is not entry)
            entry.problems.append(f"{_where(entry)}: name {entry.submission.get('name')!r} on task {task!r} is also "
                                  f"claimed by {others}" + (" (already on the base branch)" if kept else
                                  " (neither is on the base branch, so both are rejected)"))


def _name_problems(group: list[_Entry], base: dict[Path, int], view: BaseView | None) -> None:
    _same_task_problems([e for e in group if e.submission.get("name") == group[0].submission.get("name")], base)
    holder = view.holder(group[0].submission.get("name")) if view is not None else None
    if holder is not None:  # the owner and spelling the base branch's blob records, never the change's copy
        owner, spelling = holder.owner, holder.spelling
        where = f"{holder.where} (withdrawn)" if holder.withdrawn else holder.where
        for entry in group:
            if entry.submission.get("name") != spelling:
                entry.problems.append(f"{_where(entry)}: name {entry.submission.get('name')!r} is the name {spelling!r} "
                                      f"of {where} (already on the base branch; names are compared ignoring case, "
                                      "punctuation, Unicode width and look-alike letters)")
            elif owner_of(entry.submission) != owner:
                entry.problems.append(f"{_where(entry)}: name {spelling!r} belongs to owner {owner!r}, who first added "
                                      f"a task under it ({where}, as the base branch records it); this entry says "
                                      f"owner {owner_of(entry.submission)!r}")
        return
    if len(group) > 1 and len({(e.submission.get("name"), owner_of(e.submission)) for e in group}) > 1:
        for entry in group:
            others = ", ".join(str(o.path) for o in group if o is not entry)
            entry.problems.append(f"{_where(entry)}: name {entry.submission.get('name')!r} is also claimed by {others} "
                                  "with another spelling or owner (names compared ignoring case, punctuation and "
                                  "look-alike letters; none is on the base branch, so all are rejected)")


def _name(entry: _Entry) -> str:
    return folded(str(entry.submission.get("name")))


def _content_problems(group: list[_Entry], history: dict[Path, dict[str, int]]) -> None:
    if len({_name(e) for e in group}) == 1:
        return  # one entry's own outputs under several tasks (a TAB run also scored for replacement quality)
    when = {e.path: history.get(e.path, {}).get(str(e.content)) for e in group}
    held = sorted((w, e.path.as_posix(), i) for i, (e, w) in enumerate(zip(group, when.values())) if w is not None)
    owner = group[held[0][2]] if held else None
    for entry in group:
        if entry is owner or (owner is not None and _name(entry) == _name(owner)):
            continue
        if owner is not None:
            entry.problems.append(f"{entry.path / 'samples.jsonl'}: the same samples as {owner.path}, which is already on "
                                  "the base branch and held them there first (a copy of another entry's outputs)")
        else:
            others = ", ".join(str(o.path) for o in group if o is not entry)
            entry.problems.append(f"{entry.path / 'samples.jsonl'}: the same samples as {others} (a copy of another "
                                  "entry's outputs; neither is on the base branch, so both are rejected)")


def ownership_problems(entries: Iterable[_Entry], scope: Iterable[Path] = ()) -> list[tuple[Path, str]]:
    """Add to each entry's problems: a name another owner holds (or contests), a set of outputs another entry held
    first (also a withdrawn one), an owner that is not a handle, and (in CI) an owner that is not the submitter or a
    change to an entry the submitter does not own (see the module docstring and :mod:`.updates`).

    Returns (folder, problem) for every base folder under ``scope`` the change deletes without being its owner."""
    entries = [e for e in entries if e.submission]
    view = load_base([e.path for e in entries] or list(scope))
    base = view.order() if view is not None else {}
    submitter = os.environ.get(SUBMITTER_ENV) or None
    by_name: dict[str, list[_Entry]] = {}
    by_content: dict[str, list[_Entry]] = {}
    for entry in entries:
        try:
            check_owner(entry.submission.get("owner"))
        except Exception as exc:  # noqa: BLE001 - the one line naming what is accepted
            entry.problems.append(f"{_where(entry)}: owner: {exc}".replace("--owner ", ""))
        if submitter and entry.path not in base and (owner_of(entry.submission) or "").lower() != submitter.lower():
            entry.problems.append(f"{_where(entry)}: owner {owner_of(entry.submission)!r} is not the submitter "
                                  f"{submitter!r} (${SUBMITTER_ENV}); a new entry is submitted by its owner")
        by_name.setdefault(folded(str(entry.submission.get("name"))), []).append(entry)
        if getattr(entry, "content", None):
            by_content.setdefault(str(entry.content), []).append(entry)
    for group in by_name.values():
        _name_problems(group, base, view)
    contested = [g for g in by_content.values() if len(g) > 1]
    if contested:
        history = content_history([e.path for g in contested for e in g])
        for group in contested:
            _content_problems(group, history)
    if view is None:
        return []
    change_problems(entries, view, submitter)
    held_content_problems(entries, view)
    return [(w.path, w.problem) for w in withdrawals(view, scope, submitter) if w.problem]
