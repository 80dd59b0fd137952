"""What each owner and each entry did on the base branch's history: submitted, updated and withdrawn.

Read from git, never from a submission: the base branch's first-parent history (one step per change merged into it)
and, as its last step, the working tree against the base tip (the change being built). A step that adds an entry's
``submission.json`` is a submission, one that deletes it a withdrawal, and one that changes any other file of an
entry it keeps an update. Each step is counted for the owner the step's own ``submission.json`` names (for a
withdrawal, the one it deleted). Each entry folder also keeps its own events, numbered by step (stable when the
pending change is merged: it becomes that same step). Outside git, or without a base branch, nothing is known and
nothing is shown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.leaderboard.base_branch import BaseView, load_base, parse_submission, read_objects
from privasis_bench.leaderboard.naming import owner_of
from privasis_bench.leaderboard.precedence import git
from privasis_bench.leaderboard.provenance import SUBMISSION_NAME


@dataclass(frozen=True)
class OwnerActivity:
    """One owner's counts over the base branch's history."""

    owner: str
    submitted: int = 0
    updated: int = 0
    withdrawn: int = 0


@dataclass(frozen=True)
class EntryActivity:
    """One entry folder's events, oldest first: (step number, event); ``folder`` is relative to the submissions."""

    folder: str
    events: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class History:
    """Every owner's activity, sorted by owner, and every entry folder's events, sorted by folder (empty when git
    cannot say)."""

    owners: tuple[OwnerActivity, ...] = ()
    steps: int = 0  # first-parent steps of the base branch that touched a submission (the working tree's included)
    entries: tuple[EntryActivity, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The board-data form."""
        return {"steps": self.steps, "owners": [asdict(o) for o in self.owners],
                "entries": [{"folder": e.folder, "events": [list(ev) for ev in e.events]} for e in self.entries]}


_EVENTS = ("submitted", "updated", "withdrawn")


def _steps(view: BaseView, under: str) -> list[tuple[str, dict[str, str]]]:
    """Per first-parent commit of the base branch (oldest first): entry folder -> event."""
    log = git(["log", view.ref, "--first-parent", "-m", "--reverse", "--no-renames", "--format=@%H", "--name-status",
               "--", under], view.root) or ""
    steps: list[tuple[str, dict[str, str]]] = []
    for line in log.splitlines():
        if line.startswith("@"):
            steps.append((line[1:], {}))
            continue
        status, _, path = line.partition("\t")
        if not steps or not path:
            continue
        folder, _, name = path.rpartition("/")
        events = steps[-1][1]
        if name == SUBMISSION_NAME and status[:1] in "AD":
            events[folder] = "submitted" if status[:1] == "A" else "withdrawn"
        else:
            events.setdefault(folder, "updated")
    return [(commit, events) for commit, events in steps if events]


def _pending(view: BaseView, submissions: Path, rel: str) -> dict[str, str]:
    """The working tree's change against the base tip: entry folder -> event."""
    events = {}
    for path in sorted(submissions.rglob(SUBMISSION_NAME)) if submissions.is_dir() else []:
        folder = view.rel(path.parent)
        if folder is None:
            continue
        if folder not in view.folders:
            events[folder] = "submitted"
        elif view.changed(path.parent):
            events[folder] = "updated"
    for held in view.deleted([submissions]):
        events[held.rel] = "withdrawn"
    return {f: e for f, e in events.items() if f == rel or f.startswith(rel.rstrip("/") + "/") or rel in ("", ".")}


def activity(submissions: str | Path) -> History:
    """Every owner's submitted/updated/withdrawn counts for the entries under ``submissions`` (see the module)."""
    submissions = Path(submissions)
    view = load_base([submissions])
    rel = view.rel(submissions) if view is not None else None
    if view is None or rel is None:
        return History()
    steps = _steps(view, rel or ".")
    names = [f"{c}:{f}/{SUBMISSION_NAME}" if e != "withdrawn" else f"{c}^1:{f}/{SUBMISSION_NAME}"
             for c, events in steps for f, e in events.items()]
    blobs = read_objects(view.root, names)
    counted: list[tuple[str | None, str]] = []
    per_entry: dict[str, list[tuple[int, str]]] = {}
    for number, (commit, events) in enumerate(steps, 1):
        for folder, event in events.items():
            ref = f"{commit}^1" if event == "withdrawn" else commit
            sub = parse_submission(blobs.get(f"{ref}:{folder}/{SUBMISSION_NAME}"))
            if sub or event == "withdrawn":
                counted.append((owner_of(sub), event))
                per_entry.setdefault(folder, []).append((number, event))
    pending = _pending(view, submissions, rel)
    for folder, event in pending.items():
        per_entry.setdefault(folder, []).append((len(steps) + 1, event))
        if event == "withdrawn":
            sub = view.folders[folder].submission
        else:
            sub = parse_submission((view.root / folder / SUBMISSION_NAME).read_bytes())
        counted.append((owner_of(sub), event))
    return History(_tally(counted), len(steps) + (1 if pending else 0), _entries(per_entry, rel))


def _entries(per_entry: dict[str, list[tuple[int, str]]], rel: str) -> tuple[EntryActivity, ...]:
    """Per entry folder (named relative to the submissions folder ``rel``), its events; folders outside it dropped."""
    prefix = rel.rstrip("/") + "/" if rel not in ("", ".") else ""
    return tuple(EntryActivity(folder[len(prefix):], tuple(events)) for folder, events in sorted(per_entry.items())
                 if folder.startswith(prefix) and folder[len(prefix):])


def _tally(counted: Iterable[tuple[str | None, str]]) -> tuple[OwnerActivity, ...]:
    totals: dict[str, dict[str, int]] = {}
    for owner, event in counted:
        key = owner if isinstance(owner, str) and owner else "(unknown)"
        totals.setdefault(key, dict.fromkeys(_EVENTS, 0))[event] += 1
    return tuple(OwnerActivity(owner, **counts) for owner, counts in sorted(totals.items(), key=lambda kv: kv[0].lower()))
