"""Where a SPIA task's documents come from: the user's files, or one file of the public repository at a pinned commit.

A task names the repository (``dataset.path``), the commit (``dataset.revision``, a full 40-digit sha), the file
inside it (``dataset.name``) and the file's sha256 (``scorer_args.data_sha256``). Without ``--data-files`` the file
is fetched once from GitHub's raw-file host into ``<cache>/spia/<commit>/`` (``PRIVASIS_BENCH_CACHE_DIR``, else
``~/.cache/privasis-bench``) and checked against the sha256 before it is used; later runs read the cached copy.
Offline, or when the host refuses, the fetch fails at once with one line saying how to pass the file instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from privasis_bench.errors import DataError

#: The official repository and the commit whose data (and scoring code) this project was checked against.
REPOSITORY = "maisonOP/spia"
COMMIT = "3fa78a1b3c75788c6294f40024fc79e1ef42923f"
#: Where raw files are fetched from (``{repository}/{commit}/{name}`` is appended); tests point it at a local server.
#: Messages never show the host (a variable's value), only the file and the commit.
RAW_HOST_ENV = "PRIVASIS_SPIA_RAW_HOST"
RAW_HOST = "https://raw.githubusercontent.com"
TIMEOUT_S = 20.0
_SHA = re.compile(r"[0-9a-f]{40}")


def cache_root() -> Path:
    """``$PRIVASIS_BENCH_CACHE_DIR/spia`` when set, else ``~/.cache/privasis-bench/spia``."""
    env = os.environ.get("PRIVASIS_BENCH_CACHE_DIR")
    return (Path(env).expanduser() if env else Path.home() / ".cache" / "privasis-bench") / "spia"


def pinned(task: Any) -> tuple[str, str, str, str | None]:
    """(repository, commit, file name, sha256) a task names; one line naming the task file when a part is missing."""
    where = getattr(task, "source_file", None) or task.task
    dataset = task.dataset
    repository, commit, name = getattr(dataset, "path", None), getattr(dataset, "revision", None), getattr(dataset, "name", None)
    if not repository or not name:
        raise DataError(f"{where}: the SPIA data is not here: pass --data-files with SPIA's JSONL (e.g. "
                        f"data/spia/spia_tab_144.jsonl of {REPOSITORY} at {COMMIT[:7]})")
    if not isinstance(commit, str) or not _SHA.fullmatch(commit):
        raise DataError(f"{where}: dataset.revision must be a full 40-digit commit sha of {repository} (a branch "
                        "moves; the data must not)")
    digest = (getattr(task, "scorer_args", None) or {}).get("data_sha256")
    return repository, commit, name, (str(digest) if digest else None)


def source_line(task: Any) -> str:
    """Where the task's data comes from, in one line (``tasks list``)."""
    files = getattr(task.dataset, "data_files", None)
    if files:
        return ", ".join(files)
    repository, commit, name, _ = pinned(task)
    return f"github.com/{repository}@{commit[:7]} {name} (fetched once and cached, or --data-files)"


def fetch(task: Any, name: str | None = None, digest: str | None = None) -> Path:
    """The task's pinned file (or the file ``name`` of the same commit, checked against ``digest``), from the cache
    or fetched now (see the module docstring)."""
    repository, commit, pinned_name, pinned_digest = pinned(task)
    name, digest = (name, digest) if name else (pinned_name, pinned_digest)
    target = cache_root() / commit / Path(name).name
    if target.is_file() and (digest is None or _sha256(target.read_bytes()) == digest):
        _note_origin(target, repository, commit, name)
        return target
    host = os.environ.get(RAW_HOST_ENV, RAW_HOST).rstrip("/")
    url = f"{host}/{repository}/{commit}/{name}"
    body = _get(url, name, repository, commit)
    if digest is not None and _sha256(body) != digest:
        raise DataError(f"SPIA's {name} at {commit[:7]}: the fetched file's sha256 is {_sha256(body)[:12]}..., the task pins "
                        f"{digest[:12]}...: not the pinned data; pass a copy you trust with --data-files")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    partial.write_bytes(body)
    os.replace(partial, target)
    _note_origin(target, repository, commit, name)
    return target


def _origin_file(path: Path) -> Path:
    return path.with_name(f"{path.name}.origin.json")


def _note_origin(target: Path, repository: str, commit: str, name: str) -> None:
    """Write beside a cached file where it came from, so a run that reads the cached copy still records the pin."""
    origin = {"repository": repository, "commit": commit, "path": name, "sha256": _sha256(target.read_bytes())}
    where = _origin_file(target)
    try:
        if not where.is_file() or json.loads(where.read_text("utf-8")) != origin:
            where.write_text(json.dumps(origin, sort_keys=True) + "\n", "utf-8")
    except (OSError, ValueError):
        pass  # a read-only cache: the run then records the file alone


def origin(path: str | Path) -> dict[str, str] | None:
    """Where a data file came from: ``{"repository", "commit", "path", "sha256"}`` when it is a fetched copy of a pinned
    file whose content still has the recorded sha256, else None (a user's own file)."""
    path = Path(path)
    try:
        noted = json.loads(_origin_file(path).read_text("utf-8"))
        same = isinstance(noted, dict) and noted.get("sha256") == _sha256(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not same or not all(isinstance(noted.get(k), str) for k in ("repository", "commit", "path")):
        return None
    return {k: noted[k] for k in ("repository", "commit", "path", "sha256")}


def _get(url: str, name: str, repository: str, commit: str) -> bytes:
    import httpx

    hint = (f"download {name} of github.com/{repository} at commit {commit[:7]} where the network is reachable and "
            "pass it with --data-files PATH")
    try:
        response = httpx.get(url, timeout=TIMEOUT_S, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise DataError(f"cannot fetch SPIA's {name} ({type(exc).__name__}: offline?): {hint}") from None
    if response.status_code != 200:
        raise DataError(f"cannot fetch SPIA's {name} (HTTP {response.status_code}): {hint}")
    return response.content


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
