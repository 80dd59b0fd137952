"""The response cache across workers: one SQLite shard per batch, merged by the driver into the main cache.

Several processes on several machines writing one SQLite file is what SQLite is not made for (locks on shared
storage). So every batch writes its answers to its own shard, ``<cache dir>/ray-shards/<run key>/<batch>.sqlite``
(one writer at a time: the batch's worker, or the worker that runs it again after a crash, which then finds
every answer the dead one stored), and reads the main cache read-only. The driver merges the shards into the
main cache after the stages, and before them (shards left by a crashed run): so a re-run pays only for the
requests that were in flight. On several machines ``--cache-dir`` must be on storage every node sees.

A shard also keeps the books of what its batch paid until the batch's counts reach the driver: a call is
written down as *pending* while it is out and its answer as *unreported* when stored; both are cleared when the
batch ends on its worker (its counts then travel back with it). A worker that dies (its node lost, its process
killed) leaves them behind, so whoever opens the shard next (the batch run again, or the driver merging shards
of a stopped run) counts them: every request the dead worker paid for, answered or in flight, reaches the spend
ledger once.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from pathlib import Path

from privasis_bench.adapters.base import ChatResult
from privasis_bench.engine.cache import ResponseCache, result_from_dict
from privasis_bench.engine.stats import EngineStats

SHARDS_DIR = "ray-shards"
#: Requests sent (pending) and answers stored (unreported) by an attempt whose counts have not reached the driver.
_BOOKS = ("CREATE TABLE IF NOT EXISTS pending (key TEXT NOT NULL, attempt TEXT NOT NULL, role TEXT NOT NULL, "
          "PRIMARY KEY (key, attempt))",
          "CREATE TABLE IF NOT EXISTS unreported (key TEXT NOT NULL, attempt TEXT NOT NULL, role TEXT NOT NULL, "
          "PRIMARY KEY (key, attempt))")


def shard_dir(main: ResponseCache, run_key: str) -> Path:
    """Where the shards of one run (one output directory and stage set) live, next to the main cache."""
    digest = hashlib.sha256(run_key.encode("utf-8")).hexdigest()[:16]
    return main.path.parent / SHARDS_DIR / digest


def batch_key(*parts: str) -> str:
    """A file name for a batch's shard that depends only on what the batch holds."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]


class ShardCache(ResponseCache):
    """A batch's own cache file, falling back to a read-only view of the main cache on a miss."""

    def __init__(self, path: str | Path, main_path: str | Path | None, role: str = "model", *,
                 settle_on_close: bool = True) -> None:
        super().__init__(path)
        self.role, self.attempt, self.settle_on_close = role, uuid.uuid4().hex, settle_on_close
        with self._lock:
            for statement in _BOOKS:
                self._connection().execute(statement)
        #: what earlier attempts on this shard paid and never reported (see the module docstring)
        self.inherited = _unreported(self._connection(), role)
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

    def put(self, key: str, spec_key: str, result: ChatResult) -> bool:
        """Store an answer, written down as paid by this attempt until :meth:`close`."""
        stored = super().put(key, spec_key, result)
        if stored:
            self._book("INSERT OR REPLACE INTO unreported (key, attempt, role) VALUES (?, ?, ?)", (key, self.attempt, self.role))
        return stored

    def claim(self, key: str) -> bool:
        """Always ours: a shard has one writer, and a batch run again after a crash must not wait for the dead one."""
        return True

    def release(self, key: str) -> None:
        """Nothing to give up (see :meth:`claim`)."""

    def sent(self, call: str) -> None:
        """Write down a call about to be sent to the model (``call``: unique per call), pending until :meth:`returned`."""
        self._book("INSERT OR REPLACE INTO pending (key, attempt, role) VALUES (?, ?, ?)", (call, self.attempt, self.role))

    def returned(self, call: str) -> None:
        """The call came back (answered or failed): no longer pending."""
        self._book("DELETE FROM pending WHERE key = ? AND attempt = ?", (call, self.attempt))

    def _book(self, sql: str, args: tuple[str, ...]) -> None:
        with self._lock:
            self._connection().execute(sql, args)

    def close(self) -> None:
        """Clear the books (this attempt's counts, and what it inherited, now travel with the batch to the driver)
        unless the batch goes on to another stage first (``settle_on_close=False``: the driver calls :func:`settle`
        when the batch lands); close the shard and the read-only view of the main cache."""
        with self._lock:
            if self._conn is not None and self.settle_on_close:
                _settle(self._conn)
            if self._main is not None:
                self._main.close()
                self._main = None
        super().close()


def _settle(conn: sqlite3.Connection) -> None:
    for table in ("pending", "unreported"):
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names


def settle(directory: Path, names: list[str]) -> None:
    """Clear the books of the shards ``<directory>/<name>.sqlite`` (their batch's counts reached the driver)."""
    for name in names:
        path = directory / f"{name}.sqlite"
        if not path.is_file():
            continue
        try:
            conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
            try:
                _settle(conn)
            finally:
                conn.close()
        except sqlite3.Error:
            continue  # a shard without books has nothing to clear


def _unreported(conn: sqlite3.Connection, role: str | None) -> EngineStats:
    """What the books of a shard hold for ``role`` (None: every role): each pending request as one call (its tokens
    are unknown), each unreported answer as one call with its tokens."""
    where, args = ("WHERE u.role = ?", (role,)) if role is not None else ("", ())
    stats = EngineStats()
    stats.batches += conn.execute(f"SELECT COUNT(*) FROM pending {where.replace('u.', '')}", args).fetchone()[0]  # noqa: S608
    rows = conn.execute(f"SELECT r.result FROM unreported u JOIN responses r ON r.key = u.key {where}", args).fetchall()  # noqa: S608
    for (blob,) in rows:
        stats.batches += 1
        try:
            stats.usage.add(result_from_dict(json.loads(blob)).usage)
        except (ValueError, TypeError):
            continue
    return stats


def unreported_spend(directory: Path) -> dict[str, EngineStats]:
    """Per role, what the shards in ``directory`` hold as paid by workers that died and never reported it (a stopped
    run's shards, read by the driver before it merges them)."""
    spent: dict[str, EngineStats] = {}
    for shard in sorted(directory.glob("*.sqlite")) if directory.is_dir() else []:
        try:
            conn = sqlite3.connect(str(shard), timeout=30.0)
            try:
                roles = [r for (r,) in conn.execute("SELECT role FROM pending UNION SELECT role FROM unreported")]
                for role in roles:
                    spent.setdefault(role, EngineStats()).absorb(_unreported(conn, role))
            finally:
                conn.close()
        except sqlite3.Error:
            continue  # a shard without books (cut short, or made before they existed) reports nothing
    return spent


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

