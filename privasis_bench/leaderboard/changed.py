"""Pull-request mode of ``leaderboard verify`` (``--changed-since REF``; docs/publishing.md, *Pull-request mode*):
every entry gets the cheap checks, and the re-judge only covers what the change can have moved: submission folders
new or differing from ``REF`` in any byte (blob ids of the working tree, uncommitted edits included), entries whose
row of the committed re-judge report changed (every entry when anything else in it did), and every entry when a
file the judge's answers depend on changed (:func:`judge_inputs`). An unchanged entry rests on ``REF`` having been
fully verified, which is why ``.ci/run`` never takes ``REF`` from the repository.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.base_branch import read_objects, tree_blobs, working_blobs
from privasis_bench.leaderboard.family_api import board_families
from privasis_bench.leaderboard.precedence import BASE_REF_ENV, git, relative

#: Paths (prefixes, relative to the repository root) whose change can change what the pinned judge answers.
JUDGE_INPUTS = ("tasks/", "privasis_bench/protocol/", "privasis_bench/engine/", "privasis_bench/adapters/",
                "privasis_bench/leaderboard/rejudge", "privasis_bench/cli/rejudging.py", ".ci/constraints.txt",
                ".ci/install-test-deps", "pyproject.toml")


def judge_inputs() -> tuple[str, ...]:
    """:data:`JUDGE_INPUTS` and, for every registered family with a re-judge, the folders of its scorer and re-judge
    modules (a family builds what its re-judge asks there, e.g. its roles' requests)."""
    homes = [target.split(":")[0].rsplit(".", 1)[0].replace(".", "/") + "/"
             for fam in board_families() if fam.rejudge for target in (fam.scorer, fam.rejudge)]
    return tuple(dict.fromkeys(JUDGE_INPUTS + tuple(homes)))


class ChangeError(PrivasisError):
    """``--changed-since`` cannot be honoured (no git repository, or a reference git does not know)."""


@dataclass(frozen=True)
class ChangeSet:
    """What a change touches against ``ref`` (see the module docstring)."""

    ref: str
    commit: str
    entries: frozenset[Path]  # submission folders new or changed against ref
    report_rows: frozenset[tuple[str, str]]  # (name, task) of re-judge report rows added, changed or removed
    judge_inputs: tuple[str, ...]  # changed files the judge's answers depend on (any: everything is full)

    def full(self, path: Path, submission: dict[str, Any]) -> bool:
        """Whether the entry at ``path`` gets the full verification (its re-judge included)."""
        key = (str(submission.get("name")), str((submission.get("task") or {}).get("name")))
        return bool(self.judge_inputs) or Path(path).resolve() in self.entries or key in self.report_rows

    def summary(self, total: int, full: int) -> str:
        """One line saying what the change touches and what is verified in full."""
        why = (f"judge inputs changed ({', '.join(self.judge_inputs[:3])}{', ...' if len(self.judge_inputs) > 3 else ''})"
               if self.judge_inputs else f"{len(self.entries)} folder(s) new or changed, "
               f"{len(self.report_rows)} report row(s) touched")
        return (f"changed since {self.ref} ({self.commit[:12]}): {why}; {full} of {total} entries verified in full "
                f"(re-judged), the others by the cheap checks (schemas, hashes, recompute, ownership)")


def _report_rows(text: bytes | None) -> tuple[dict[tuple[str, str], str], str]:
    """(name, task) -> canonical JSON of each report row, and the canonical JSON of everything else in the file."""
    try:
        data = json.loads(text.decode("utf-8")) if text else {}
    except (UnicodeDecodeError, ValueError):
        return {}, "unreadable"
    if not isinstance(data, dict):
        return {}, "not an object"
    rows = {}
    for row in data.get("entries") or []:
        if isinstance(row, dict):  # a row without a seed of its own takes the file's: that is part of the row
            agreement = row.get("agreement")
            if isinstance(agreement, dict) and "seed" not in agreement:
                row = {**row, "agreement": {**agreement, "seed": data.get("rejudge_seed")}}
            rows[(str(row.get("name")), str(row.get("task")))] = json.dumps(row, sort_keys=True)
    rest = {k: v for k, v in data.items() if k not in ("entries", "rejudge_seed")}
    return rows, json.dumps(rest, sort_keys=True)


def _changed_files(root: Path, commit: str) -> list[str]:
    tracked = git(["diff", "--name-only", "--no-renames", commit, "--", "."], root) or ""
    untracked = git(["ls-files", "--others", "--exclude-standard", "--", "."], root) or ""
    return sorted({line for line in (tracked + untracked).splitlines() if line})


def changes_since(ref: str, folders: Iterable[Path], report: Path | None = None) -> ChangeSet:
    """What the working tree changes against ``ref`` among ``folders`` (submission folders) and ``report``."""
    folders = [Path(f).resolve() for f in folders]
    cwd = next((f for f in folders if f.is_dir()), Path.cwd())
    top = git(["rev-parse", "--show-toplevel"], cwd)
    if top is None:
        raise ChangeError(f"--changed-since {ref}: {cwd} is not inside a git repository (verify without it to check "
                          "every entry in full)")
    root = Path(top.strip()).resolve()
    commit = git(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], root)
    if commit is None:
        raise ChangeError(f"--changed-since {ref}: git does not know this commit here (fetch the base branch with its "
                          "history, e.g. `git fetch origin main`)")
    commit = commit.strip()
    changed: set[Path] = set()
    for folder in folders:  # a folder outside the repository has nothing to vouch for it: changed
        rel = relative(folder, root)
        if rel is None or tree_blobs(root, commit, rel) != working_blobs(root, rel):
            changed.add(folder)
    rows: set[tuple[str, str]] = set()
    if report is not None:
        rel_report = relative(report, root)
        old = read_objects(root, [f"{commit}:{rel_report}"]).get(f"{commit}:{rel_report}") if rel_report else None
        new = report.read_bytes() if report.is_file() else None
        (old_rows, old_rest), (new_rows, new_rest) = _report_rows(old), _report_rows(new)
        if old_rest != new_rest:
            rows |= set(old_rows) | set(new_rows)
        rows |= {k for k in set(old_rows) | set(new_rows) if old_rows.get(k) != new_rows.get(k)}
    judge = tuple(p for p in _changed_files(root, commit) if p.startswith(judge_inputs()))
    return ChangeSet(ref, commit, frozenset(changed), frozenset(rows), judge)


@contextlib.contextmanager
def base_branch_as(ref: str | None) -> Iterator[None]:
    """Within the block, ownership reads ``ref`` as the base branch (unless ``$PRIVASIS_BENCH_BASE_REF`` says one)."""
    if ref is None or os.environ.get(BASE_REF_ENV):
        yield
        return
    os.environ[BASE_REF_ENV] = ref
    try:
        yield
    finally:
        os.environ.pop(BASE_REF_ENV, None)
