"""Where the verifier reads a task's records: the shipped files, or a local copy of a pinned hub dataset.

CI is offline, so a hub task (Privasis-Zero, pinned to a dataset commit) is verified from ``<data dir>/<task>.jsonl``
(or ``.json``/``.parquet``; ``--data-dir``, else ``$PRIVASIS_BENCH_DATA_DIR``, else ``data/verify``), accepted only
when both its record-id hash and its content hash (:mod:`.data_pin`) are the ones ``pinned_data.json`` holds for that
revision; an edited record is named (docs/publishing.md, *Privasis-Zero entries in CI*).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from privasis_bench.data.loading import LoadedRecords, load_records, with_data_files
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.data_pin import content_hash, first_difference, pin
from privasis_bench.tasks.config import TaskConfig

DATA_DIR_ENV = "PRIVASIS_BENCH_DATA_DIR"
DEFAULT_DATA_DIR = Path("data") / "verify"
_SUFFIXES = (".jsonl", ".json", ".parquet")


class DataUnavailable(PrivasisError):
    """The records of a task cannot be read (or do not match the pinned hash)."""


@lru_cache(maxsize=1)
def pinned_data() -> dict[str, Any]:
    """``pinned_data.json``: per hub task, the dataset revision and the sha256 of its ordered record ids."""
    text = resources.files("privasis_bench.leaderboard").joinpath("pinned_data.json").read_text("utf-8")
    return json.loads(text)["tasks"]


def data_dir(explicit: str | Path | None = None) -> Path:
    """The local data directory: ``explicit``, else ``$PRIVASIS_BENCH_DATA_DIR``, else ``data/verify``."""
    return Path(explicit or os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def _local_file(task: TaskConfig, directory: str | Path | None) -> Path:
    """The local copy of a hub task's dataset (raises :class:`DataUnavailable` naming where to place it)."""
    where = data_dir(directory)
    found = next((p for p in (where / f"{task.task}{s}" for s in _SUFFIXES) if p.is_file()), None)
    if found is None:
        raise DataUnavailable(f"no local copy of {task.dataset.describe()}: place it as {where / task.task}.jsonl "
                              f"(docs/publishing.md, 'Privasis-Zero entries in CI')")
    return found


def task_records(task: TaskConfig, *, limit: int | None, directory: str | Path | None = None) -> tuple[LoadedRecords, int]:
    """(the records a run with ``limit`` evaluated, how many records the whole task holds).

    Shipped data files are read as they are; a hub dataset only from a local copy whose record-id hash equals the
    pinned one (raises :class:`DataUnavailable` naming the file to place and the hash it must have).
    """
    if task.dataset.data_files:
        full = load_records(task)
        return (full if limit is None else load_records(task, limit=limit)), len(full)
    pin = pinned_data().get(task.task)
    if pin is None or pin.get("revision") != task.dataset.revision:
        raise DataUnavailable(f"task {task.task!r} (dataset revision {task.dataset.revision!r}) has no pinned record-id "
                              "hash in privasis_bench/leaderboard/pinned_data.json")
    path = _local_file(task, directory)
    local = with_data_files(task, [str(path)])
    full = load_records(local)
    if not pin.get("ids_hash"):
        raise DataUnavailable(f"task {task.task!r}: no record-id hash pinned yet for revision {pin['revision']} "
                              f"(the local copy {path} gives {full.ids_hash}; a maintainer pins it after checking the copy)")
    if full.ids_hash != pin["ids_hash"]:
        raise DataUnavailable(f"{path}: record-id hash {full.ids_hash} is not the pinned {pin['ids_hash']} of "
                              f"{task.dataset.describe()} (a different or edited copy)")
    got = content_hash(full.records)
    if not pin.get("content_hash"):
        raise DataUnavailable(f"task {task.task!r}: no content hash pinned yet for revision {pin['revision']} (the local "
                              f"copy {path} gives {got}; a maintainer pins it with `privasis-bench leaderboard pin-data`)")
    if got != pin["content_hash"]:
        raise DataUnavailable(f"{path}: {first_difference(full.records, pin)} of {task.dataset.describe()} (content "
                              f"hash {got}, pinned {pin['content_hash']}: an edited copy is never used)")
    return (full if limit is None else load_records(local, limit=limit)), len(full)


def local_pin(task: TaskConfig, directory: str | Path | None = None) -> dict[str, Any]:
    """The ``pinned_data.json`` entry for the local copy of a hub task (for a maintainer who checked the copy)."""
    if task.dataset.data_files:
        raise DataUnavailable(f"task {task.task!r} reads shipped data files; only hub tasks are pinned")
    full = load_records(with_data_files(task, [str(_local_file(task, directory))]))
    return pin(list(full.records), task.dataset.revision, full.ids_hash)
