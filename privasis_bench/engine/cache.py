"""A persistent response cache: a paid call is never paid for twice.

Results are stored in one SQLite table keyed by :meth:`ChatRequest.cache_key` (a sha256 over the
model spec key, the messages and the generation settings). Only successful results are stored, so
a failed call is always attempted again. A second table holds *claims*: a process about to pay for a
request claims its key first, so another process sharing the cache waits for that answer instead of
paying for it again; a claim whose process has died (or that is older than ``claim_ttl``) is ignored. Each ``put`` commits on its own (WAL journal), so a process
killed with SIGKILL loses at most the calls that were still in flight. One cache file may be shared by
several processes and threads at once. The spec key never contains secrets (see
:meth:`ModelSpec.key`), and nothing else about the caller is stored.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from privasis_bench.adapters.base import ChatResult, Usage
from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir

CACHE_DIR_ENV = "PRIVASIS_BENCH_CACHE_DIR"
CACHE_FILE_NAME = "responses.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    result TEXT NOT NULL,
    created REAL NOT NULL
)
"""
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    created REAL NOT NULL
)
"""
#: Seconds after which a claim is ignored even if its process seems alive (e.g. another host's process).
CLAIM_TTL_S = 15 * 60


def default_cache_dir() -> Path:
    """``$PRIVASIS_BENCH_CACHE_DIR`` when set, else ``~/.cache/privasis-bench``."""
    env = os.environ.get(CACHE_DIR_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "privasis-bench"


_SESSION: dict[str, Any] = {}


def open_response_cache(cache_dir: Path | None, no_cache: bool) -> "ResponseCache | None":
    """The response cache a command uses (``--cache-dir`` / ``--no-cache``), remembered for this process so that
    engines an adapter builds inside itself (``decomp:``, ``intact:`` sub-calls) use the same one."""
    path = None if no_cache else (cache_dir or default_cache_dir()) / CACHE_FILE_NAME
    _SESSION["path"] = path
    return None if path is None else ResponseCache(path)


def session_cache() -> "ResponseCache | None":
    """The cache :func:`open_response_cache` opened in this process; None after ``--no-cache`` or when no command
    opened one (library use: an adapter built directly caches nothing behind its caller's back)."""
    path = _SESSION.get("path")
    return None if path is None else ResponseCache(path)


def end_session() -> None:
    """Forget the command's cache (called when a command ends)."""
    _SESSION.clear()


#: The columns each table of the cache must have (a file with other columns belongs to someone else).
_COLUMNS = {"responses": {"key", "spec", "result", "created"}, "claims": {"key", "owner", "host", "pid", "created"}}


def _foreign_tables(conn: sqlite3.Connection) -> str | None:
    """The first cache table whose columns are not the ones this version writes, or None."""
    for table, columns in _COLUMNS.items():
        found = {row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()}
        if not columns <= found:
            return table
    return None


def result_from_dict(data: dict[str, Any]) -> ChatResult:
    """Rebuild a :class:`ChatResult` from :meth:`ChatResult.to_dict` output."""
    usage = data.get("usage") or {}
    return ChatResult(
        text=data.get("text"),
        finish_reason=data.get("finish_reason"),
        usage=Usage(int(usage.get("prompt_tokens", 0) or 0), int(usage.get("completion_tokens", 0) or 0)),
        error=data.get("error"),
        cached=bool(data.get("cached", False)),
        attempts=int(data.get("attempts", 1) or 1),
        spans=[(int(s), int(e)) for s, e in data["spans"]] if data.get("spans") is not None else None,
        replacements=[str(r) for r in data["replacements"]] if data.get("replacements") is not None else None,
    )


#: How long opening the cache keeps trying while another process holds it (creating it, switching it to WAL).
OPEN_WAIT_S = 30.0


def _open_once(path: Path) -> tuple[sqlite3.Connection, str | None]:
    # isolation_level=None: autocommit, every statement is its own durable transaction.
    conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
        conn.execute(_CLAIMS)
        return conn, _foreign_tables(conn)
    except BaseException:
        conn.close()
        raise


def _open(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """Connect, set WAL mode and create the tables; also returns the first foreign table (see ``_foreign_tables``).

    Two processes opening a new cache at the same moment can get "database is locked" at once, without SQLite's
    busy handler (switching to WAL needs the file to itself): that is a wait, not a broken file, so the whole
    sequence is tried again until :data:`OPEN_WAIT_S` has passed.
    """
    deadline, pause = time.monotonic() + OPEN_WAIT_S, 0.02
    while True:
        try:
            return _open_once(path)
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)  # the other opener holds the file for a few milliseconds: back off and try again
        pause = min(pause * 2, 0.5)


class CacheFileError(PrivasisError):
    """The response cache file cannot be opened (corrupted, not SQLite, read-only)."""


class ResponseCache:
    """SQLite-backed map from a request's cache key to its successful :class:`ChatResult`.

    ``path`` is the database file; a directory is accepted too (the file is then
    ``<dir>/responses.sqlite``). Safe to share between threads (one connection behind a lock)
    and between processes (WAL mode plus a busy timeout).
    """

    def __init__(self, path: str | os.PathLike[str], *, claim_ttl: float = CLAIM_TTL_S) -> None:
        path = Path(path).expanduser()
        if path.is_dir():
            path = path / CACHE_FILE_NAME
        ensure_dir(path.parent, "--cache-dir")
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn, foreign = _open(path)
        except sqlite3.Error as exc:
            raise CacheFileError(
                f"response cache {path}: not a usable SQLite database ({exc}); delete the file, choose another "
                "--cache-dir, or run with --no-cache"
            ) from None
        if foreign:
            self._conn.close()
            raise CacheFileError(
                f"response cache {path}: table {foreign} has columns this version does not write (another program's "
                "or another version's file); choose another --cache-dir, move the file away, or run with --no-cache")
        self.claim_ttl = claim_ttl
        self.host = socket.gethostname()
        self.owner = f"{self.host}:{os.getpid()}:{uuid.uuid4().hex[:12]}"

    @classmethod
    def default(cls) -> "ResponseCache":
        """The cache in :func:`default_cache_dir`."""
        return cls(default_cache_dir() / CACHE_FILE_NAME)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"response cache {self.path} is closed")
        return self._conn

    def get(self, key: str) -> ChatResult | None:
        """The stored result for ``key`` (marked ``cached=True``), or None."""
        with self._lock:
            row = self._connection().execute("SELECT result FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            result = result_from_dict(json.loads(row[0]))
        except (ValueError, TypeError):
            return None  # an unreadable entry is a miss; the next put overwrites it
        if not result.ok:
            return None
        result.cached = True
        return result

    def put(self, key: str, spec_key: str, result: ChatResult) -> bool:
        """Store a successful result (failures are ignored); returns True when something was written."""
        if not result.ok:
            return False
        payload = result.to_dict()
        payload["cached"] = False
        blob = json.dumps(payload, ensure_ascii=False, sort_keys=True)
        with self._lock:
            try:
                self._connection().execute(
                    "INSERT OR REPLACE INTO responses (key, spec, result, created) VALUES (?, ?, ?, ?)",
                    (key, spec_key, blob, time.time()),
                )
            except sqlite3.OperationalError as exc:  # "database or disk is full", a read-only file, ...
                raise CacheFileError(f"response cache {self.path}: cannot store an answer ({exc}); free disk space "
                                     "there, choose another --cache-dir, or run with --no-cache (finished records "
                                     "are kept; re-run the same command to resume)") from None
        return True

    def claim(self, key: str) -> bool:
        """Claim ``key`` before paying for it: True when it is now ours, False while another live process holds it."""
        now = time.time()
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT owner, host, pid, created FROM claims WHERE key = ?", (key,)).fetchone()
                if row is not None and row[0] != self.owner and not self._stale(row[1], int(row[2]), float(row[3]), now):
                    conn.execute("COMMIT")
                    return False
                conn.execute("INSERT OR REPLACE INTO claims (key, owner, host, pid, created) VALUES (?, ?, ?, ?, ?)",
                             (key, self.owner, self.host, os.getpid(), now))
                conn.execute("COMMIT")
                return True
            except BaseException as exc:
                conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError) and "locked" not in str(exc):
                    raise CacheFileError(f"response cache {self.path}: cannot record a claim ({exc}); free disk space "
                                         "there, choose another --cache-dir, or run with --no-cache") from None
                raise

    def release(self, key: str) -> None:
        """Give up our claim on ``key`` (after its answer is stored, or the call failed)."""
        with self._lock:
            self._connection().execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner))

    def _stale(self, host: str, pid: int, created: float, now: float) -> bool:
        if now - created > self.claim_ttl:
            return True
        return host == self.host and not _alive(pid)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def count_by_spec(self) -> dict[str, int]:
        """Number of stored results per model spec key."""
        with self._lock:
            rows = self._connection().execute("SELECT spec, COUNT(*) FROM responses GROUP BY spec").fetchall()
        return {spec: int(n) for spec, n in rows}

    def clear(self, spec_key: str | None = None) -> int:
        """Delete every entry (or those of one spec key); returns how many were removed."""
        with self._lock:
            conn = self._connection()
            if spec_key is None:
                cur = conn.execute("DELETE FROM responses")
            else:
                cur = conn.execute("DELETE FROM responses WHERE spec = ?", (spec_key,))
            return int(cur.rowcount)

    def close(self) -> None:
        """Release this instance's claims and close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))
                except sqlite3.Error:
                    pass  # a claim left behind is ignored once this process is gone
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "ResponseCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True
