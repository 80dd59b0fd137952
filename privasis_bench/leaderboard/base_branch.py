"""What the base branch holds, read once from git: every submission folder on its tip (with the ``submission.json``
the base branch records for it and the blob of every file), the first owner of every name it ever held, and which
folders the working tree changed, added or deleted against it.

Everything here comes from git objects of the base branch, never from the files of the change under test: a pull
request can rewrite its own copy of an entry, but not the base branch's blob of it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.leaderboard.naming import folded, owner_of
from privasis_bench.leaderboard.precedence import base_ref, git, read_objects, relative
from privasis_bench.leaderboard.provenance import SUBMISSION_NAME


@dataclass(frozen=True)
class BaseFolder:
    """One submission folder on the base branch's tip."""

    rel: str  # the folder relative to the repository root, e.g. "submissions/org__model/task"
    order: int  # order of addition on the base branch (0 first)
    submission: dict[str, Any]  # the base branch's submission.json (never the change's)
    blobs: dict[str, str]  # file path (relative to the root) -> git blob id on the base tip

    @property
    def name(self) -> str:
        return str(self.submission.get("name"))

    @property
    def owner(self) -> str | None:
        return owner_of(self.submission)


@dataclass(frozen=True)
class NameHolder:
    """Who holds a (folded) name according to the base branch."""

    owner: str | None
    spelling: str
    where: str  # the base folder the holder was read from
    withdrawn: bool  # the holder's folder is no longer on the base tip (the name stays held)


@dataclass
class BaseView:
    """The base branch as the verifier reads it (see the module docstring)."""

    root: Path
    ref: str
    folders: dict[str, BaseFolder] = field(default_factory=dict)
    first_added: dict[str, NameHolder] = field(default_factory=dict)  # folded name -> first addition in history

    def rel(self, path: Path) -> str | None:
        """``path`` relative to the repository root (None when outside it)."""
        return relative(Path(path), self.root)

    def held(self, path: Path) -> BaseFolder | None:
        """The base branch's record of the folder at ``path`` (None when the base tip does not hold it)."""
        rel = self.rel(path)
        return None if rel is None else self.folders.get(rel)

    def order(self) -> dict[Path, int]:
        """Every base folder (as an absolute path) with its order of addition."""
        return {self.root / f.rel: f.order for f in self.folders.values()}

    def changed(self, path: Path) -> bool:
        """Whether the working tree's folder at ``path`` differs from the base tip's (any file edited, added or
        removed); a folder the base tip does not hold is not "changed" (it is new)."""
        held = self.held(path)
        return held is not None and working_blobs(self.root, held.rel) != held.blobs

    def holder(self, name: Any) -> NameHolder | None:
        """Who holds ``name`` (compared folded): the owner the base branch records in the first-added folder it still
        holds under that name, else the first folder it ever added under it (a withdrawn name stays held)."""
        key = folded(str(name))
        live = [f for f in self.folders.values() if folded(f.name) == key]
        if live:
            first = min(live, key=lambda f: (f.order, f.rel))
            return NameHolder(first.owner, first.name, first.rel, False)
        return self.first_added.get(key)

    def owner(self, held: BaseFolder) -> str | None:
        """The owner of a base folder's name (:meth:`holder`; the folder's own when no holder is recorded)."""
        holder = self.holder(held.name)
        return holder.owner if holder is not None else held.owner

    def deleted(self, scope: Iterable[Path]) -> list[BaseFolder]:
        """Base folders under any of ``scope`` whose submission.json the working tree no longer has."""
        rels = [r for r in (self.rel(p) for p in scope) if r is not None]
        inside = [f for f in self.folders.values()
                  if any(r in ("", ".") or f.rel == r or f.rel.startswith(r.rstrip("/") + "/") for r in rels)]
        return sorted((f for f in inside if not (self.root / f.rel / SUBMISSION_NAME).is_file()), key=lambda f: f.rel)


def blob_id(data: bytes) -> str:
    """The git blob id (sha1 of ``blob <size>\\0`` + bytes) of ``data``: the working tree compared without the index."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def working_blobs(root: Path, rel: str) -> dict[str, str]:
    """Every file under ``root/rel`` in the working tree (path relative to the root -> blob id)."""
    folder = root / rel
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = blob_id(path.read_bytes())
    return out


def tree_blobs(root: Path, ref: str, under: str = ".") -> dict[str, str]:
    """Every file under ``under`` in ``ref``'s tree (path relative to the root -> blob id)."""
    listed = git(["ls-tree", "-r", "-z", "--full-tree", ref, "--", under], root) or ""
    out = {}
    for item in listed.split("\0"):
        meta, _, path = item.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            out[path] = parts[2]
    return out


def parse_submission(data: bytes | None) -> dict[str, Any]:
    """A submission.json blob as a dict ({} when it is not one)."""
    try:
        parsed = json.loads(data.decode("utf-8")) if data is not None else {}
    except (UnicodeDecodeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _added_order(root: Path, ref: str) -> list[tuple[str, str]]:
    """(commit, submission.json path) of every addition on the base branch, oldest first."""
    log = git(["log", ref, "--reverse", "--diff-filter=A", "--no-renames", "--format=@%H", "--name-only", "--", "."],
              root) or ""
    added, commit = [], ""
    for line in log.splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line == SUBMISSION_NAME or line.endswith("/" + SUBMISSION_NAME):
            added.append((commit, line))
    return added


def load_base(paths: Iterable[Path]) -> BaseView | None:
    """The base branch of the repository holding the first of ``paths`` (None outside git or without a base)."""
    paths = [Path(p) for p in paths]
    if not paths:
        return None
    cwd = next((p if p.is_dir() else p.parent for p in paths if p.exists()), Path.cwd())
    top, ref = git(["rev-parse", "--show-toplevel"], cwd), base_ref(cwd)
    if top is None or ref is None:
        return None
    root = Path(top.strip()).resolve()
    blobs = tree_blobs(root, ref)
    added = _added_order(root, ref)
    order: dict[str, int] = {}
    for _, path in added:
        order.setdefault(path, len(order))
    held = sorted(p for p in blobs if p == SUBMISSION_NAME or p.endswith("/" + SUBMISSION_NAME))
    objects = read_objects(root, [blobs[p] for p in held] + [f"{c}:{p}" for c, p in added])
    view = BaseView(root, ref)
    for path in held:
        rel = path[: -len(SUBMISSION_NAME)].rstrip("/")
        prefix = rel + "/" if rel else ""
        files = {p: b for p, b in blobs.items() if p.startswith(prefix)} if prefix else dict(blobs)
        view.folders[rel] = BaseFolder(rel, order.get(path, len(order) + len(view.folders)),
                                       parse_submission(objects.get(blobs[path])), files)
    for commit, path in added:
        sub = parse_submission(objects.get(f"{commit}:{path}"))
        if sub.get("name") is not None:
            rel = path[: -len(SUBMISSION_NAME)].rstrip("/")
            view.first_added.setdefault(folded(str(sub["name"])),
                                        NameHolder(owner_of(sub), str(sub["name"]), rel, rel not in view.folders))
    return view
