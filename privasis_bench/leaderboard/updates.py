"""Updates, renames and deletions of entries the base branch holds, judged against the base branch only
(docs/publishing.md, *Ownership*): only the owner the base branch's blob records for a name may change, rename or
delete its folders (``$PRIVASIS_BENCH_SUBMITTER`` in CI), and outputs any folder of another name held at any point of
the base branch's history stay held, also after that folder was deleted or updated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol

from privasis_bench.leaderboard.base_branch import BaseView, parse_submission
from privasis_bench.leaderboard.naming import folded
from privasis_bench.leaderboard.precedence import read_objects, sample_versions, version_digests
from privasis_bench.leaderboard.provenance import SUBMISSION_NAME
from privasis_bench.results.files import SAMPLES_NAME


class _Entry(Protocol):
    path: Path
    submission: dict[str, Any]
    problems: list[str]
    content: str | None


@dataclass(frozen=True)
class Withdrawal:
    """A base folder the change deletes (or renames away), and why that is refused (None: allowed)."""

    path: Path
    owner: str | None
    problem: str | None


def _same(a: str | None, b: str | None) -> bool:
    return (a or "").lower() == (b or "").lower()


def change_problems(entries: Iterable[_Entry], view: BaseView, submitter: str | None) -> None:
    """Add a problem to every entry the base branch holds that the change edits, when the submitter is not the
    owner the base branch records for its name."""
    if not submitter:
        return
    for entry in entries:
        held = view.held(entry.path)
        if held is None or not view.changed(entry.path):
            continue
        owner = view.owner(held)
        if not _same(owner, submitter):
            entry.problems.append(f"{entry.path / SUBMISSION_NAME}: this change edits an entry the base branch holds "
                                  f"({held.rel}), which only its owner {owner!r} may change; the submitter is "
                                  f"{submitter!r} (the owner is read from the base branch, never from the change)")


def withdrawals(view: BaseView, scope: Iterable[Path], submitter: str | None) -> list[Withdrawal]:
    """Every base folder under ``scope`` that the working tree deletes, with the problem when the submitter is known
    and is not the owner the base branch records for it."""
    out = []
    for held in view.deleted(scope):
        owner = view.owner(held)
        problem = None
        if submitter and not _same(owner, submitter):
            problem = (f"{view.root / held.rel}: this change deletes (or renames away) the entry {held.name!r} the base "
                       f"branch holds, which only its owner {owner!r} may withdraw; the submitter is {submitter!r}")
        out.append(Withdrawal(view.root / held.rel, owner, problem))
    return out


def _historical_holders(view: BaseView) -> dict[str, list[tuple[str, str]]]:
    """content digest -> [(folded name, folder)] of every samples version the base branch's history holds."""
    versions = sample_versions(view.root, view.ref, renames=False)
    digests = version_digests(view.root, versions)
    subs = read_objects(view.root, [f"{c}:{rel}/{SUBMISSION_NAME}" for _, c, rel in versions])
    held: dict[str, list[tuple[str, str]]] = {}
    for _, commit, rel in versions:
        name = parse_submission(subs.get(f"{commit}:{rel}/{SUBMISSION_NAME}")).get("name")
        if name is not None and (commit, rel) in digests:
            held.setdefault(digests[(commit, rel)], []).append((folded(str(name)), rel))
    return held


def held_content_problems(entries: Iterable[_Entry], view: BaseView) -> None:
    """Reject an entry whose outputs (new to its folder) another name held at any point of the base branch's history:
    a withdrawn or deleted entry's outputs, or an earlier version of an entry that has since been updated, cannot
    reappear under another name. (An entry of the change that holds the same outputs now is left to the precedence
    rule of :mod:`.ownership`, which names it.)"""
    entries = [e for e in entries if e.submission]
    fresh = [e for e in entries if e.content and (view.held(e.path) is None or view.changed(e.path))]
    if not fresh:
        return
    now = {rel: str(e.content) for e in entries if (rel := view.rel(e.path)) is not None}
    holders = _historical_holders(view)
    for entry in fresh:
        mine, digest = folded(str(entry.submission.get("name"))), str(entry.content)
        others = sorted({rel for name, rel in holders.get(digest, []) if name != mine and now.get(rel) != digest})
        if others:
            entry.problems.append(f"{entry.path / SAMPLES_NAME}: the same samples as {others[0]}, which the base "
                                  "branch held under another name (outputs an entry ever held, also after it was "
                                  "withdrawn or updated, cannot reappear under a new name)")
