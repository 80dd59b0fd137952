"""The response cache across workers: one SQLite shard per batch, merged by the driver into the main cache.

Several processes on several machines writing one SQLite file is what SQLite is not made for (locks on shared
storage). So every batch writes its answers to its own shard, ``<cache dir>/ray-shards/<run key>/<batch>.sqlite``
(one writer at a time: the batch's worker, or the worker that runs it again after a crash, which then finds
every answer the dead one stored), and reads the main cache read-only. The driver merges the shards into the
main cache after the stages, and before them (shards left by a crashed run): so a re-run pays only for the
requests that were in flight. On several machines ``--cache-dir`` must be on storage every node sees.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from privasis_bench.adapters.base import ChatResult
from privasis_bench.engine.cache import ResponseCache, result_from_dict

SHARDS_DIR = "ray-shards"


def shard_dir(main: ResponseCache, run_key: str) -> Path:
    """Where the shards of one run (one output directory and stage set) live, next to the main cache."""
    digest = hashlib.sha256(run_key.encode("utf-8")).hexdigest()[:16]
    return main.path.parent / SHARDS_DIR / digest


def batch_key(*parts: str) -> str:
    """A file name for a batch's shard that depends only on what the batch holds."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]


class ShardCache(ResponseCache):
    """A batch's own cache file, falling back to a read-only view of the main cache on a miss."""

    def __init__(self, path: str | Path, main_path: str | Path | None) -> None:
        super().__init__(path)
        self._main: sqlite3.Connection | None = None
        if main_path is not None and Path(main_path).is_file():
            try:
                self._main = sqlite3.connect(f"file:{Path(main_path).resolve()}?mode=ro", uri=True, timeout=30.0,
                                             check_same_thread=False)
            except sqlite3.Error:
                self._main = None  # unreachable main cache: every request is asked (and stored in the shard)

    def get(self, key: str) -> ChatResult | None:
        """The shard's answer, else the main cache's (marked ``cached=True``), else None."""
        hit = super().get(key)
        if hit is not None or self._main is None:
            return hit
        with self._lock:
            try:
                row = self._main.execute("SELECT result FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error:
                return None
        if row is None:
            return None
        try:
            result = result_from_dict(json.loads(row[0]))
        except (ValueError, TypeError):
            return None
        if not result.ok:
            return None
        result.cached = True
        return result

    def claim(self, key: str) -> bool:
        """Always ours: a shard has one writer, and a batch run again after a crash must not wait for the dead one."""
        return True

    def release(self, key: str) -> None:
        """Nothing to give up (see :meth:`claim`)."""

    def close(self) -> None:
        """Close the shard and the read-only view of the main cache."""
        with self._lock:
            if self._main is not None:
                self._main.close()
                self._main = None
        super().close()


def merge_shards(main: ResponseCache, directory: Path) -> int:
    """Copy every answer of the shards in ``directory`` into ``main``, then delete the shards; returns answers copied."""
    copied = 0
    if not directory.is_dir():
        return 0
    for shard in sorted(directory.glob("*.sqlite")):
        try:
            conn = sqlite3.connect(str(shard), timeout=30.0)
            try:
                rows = conn.execute("SELECT key, spec, result FROM responses").fetchall()
            finally:
                conn.close()
        except sqlite3.Error:
            rows = []  # a shard cut short before its table existed holds nothing
        for key, spec, blob in rows:
            try:
                copied += main.put(key, spec, result_from_dict(json.loads(blob)))
            except (ValueError, TypeError):
                continue
        for suffix in ("", "-wal", "-shm"):
            Path(str(shard) + suffix).unlink(missing_ok=True)
    try:
        directory.rmdir()
    except OSError:
        pass
    return copied

