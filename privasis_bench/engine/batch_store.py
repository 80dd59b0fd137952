"""Provider batches in flight, written into the response cache file so that no batch is ever paid twice.

Table ``batches`` (beside ``responses`` and ``claims``): one row per batch, written *before* the batch is submitted,
with the harness's own id (the tag the provider is given), the spec key, the role, the cache key of every request
in it (the request with custom id ``r<i>`` has the i-th key) and, once known, the provider's batch id. A row is
removed only after every answer of its batch is in the response cache, so a run killed at any point finds it again
and collects the batch (from the provider's id, or by looking the tag up when the process died between creating the
batch and writing its id down) instead of submitting those requests again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_TABLE = """
CREATE TABLE IF NOT EXISTS batches (
    tag TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    role TEXT NOT NULL,
    provider_id TEXT,
    keys TEXT NOT NULL,
    created REAL NOT NULL
)
"""
#: Every provider batch id ever recorded in this cache (kept after its row is removed): when a batch has to be found
#: again without a tag the provider keeps (Anthropic), these are not it.
_IDS = "CREATE TABLE IF NOT EXISTS batch_ids (provider_id TEXT PRIMARY KEY)"


@dataclass
class BatchRow:
    """One batch in flight: ``keys[i]`` is the cache key of custom id ``r<i>``."""

    tag: str
    spec: str
    role: str
    provider_id: str | None
    keys: list[str]
    created: float


def custom_id(index: int) -> str:
    """The custom id of the index-th request of a batch."""
    return f"r{index}"


class BatchStore:
    """The ``batches`` table of a response cache file (its own connection; safe across threads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.execute(_TABLE)
        self._conn.execute(_IDS)

    def add(self, tag: str, spec: str, role: str, keys: list[str]) -> None:
        """Record a batch about to be submitted (durable before the provider hears of it)."""
        with self._lock:
            self._conn.execute("INSERT INTO batches (tag, spec, role, provider_id, keys, created) VALUES (?,?,?,?,?,?)",
                               (tag, spec, role, None, json.dumps(keys), time.time()))

    def set_provider_id(self, tag: str, provider_id: str) -> None:
        """The provider accepted the batch under this id."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("UPDATE batches SET provider_id = ? WHERE tag = ?", (provider_id, tag))
                self._conn.execute("INSERT OR IGNORE INTO batch_ids (provider_id) VALUES (?)", (provider_id,))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def known_ids(self) -> frozenset[str]:
        """Every provider batch id recorded in this cache."""
        with self._lock:
            return frozenset(r[0] for r in self._conn.execute("SELECT provider_id FROM batch_ids"))

    def remove(self, tag: str) -> None:
        """Every answer of the batch is stored (or it was never created): forget it."""
        with self._lock:
            self._conn.execute("DELETE FROM batches WHERE tag = ?", (tag,))

    def rows(self, spec: str, role: str) -> list[BatchRow]:
        """The batches in flight for one spec key and role, oldest first."""
        with self._lock:
            found = self._conn.execute("SELECT tag, spec, role, provider_id, keys, created FROM batches WHERE spec = ? "
                                       "AND role = ? ORDER BY created", (spec, role)).fetchall()
        return [BatchRow(t, s, r, p, list(json.loads(k)), float(c)) for t, s, r, p, k, c in found]

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]


def pending_batches(path: str | Path | None, spec: str, role: str) -> int:
    """How many batches an earlier run left in flight for ``spec`` and ``role`` in the cache file at ``path``, read
    without changing the file (0 when there is none, or no such file)."""
    if path is None or not Path(path).is_file():
        return 0
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM batches WHERE spec = ? AND role = ?", (spec, role)).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:  # no batches table (never used --batch), or not a cache file
        return 0


def abandon_batches(path: str | Path, spec: str, role: str) -> int:
    """Forget the batches in flight for ``spec`` and ``role`` (``--batch-abandon``); how many were forgotten."""
    store = BatchStore(path)
    try:
        rows = store.rows(spec, role)
        for row in rows:
            store.remove(row.tag)
        return len(rows)
    finally:
        store.close()
