"""The spend ledger of a task directory: what every invocation that worked there paid, and the total.

``results.json`` describes the invocation that wrote it; a resumed or no-op re-run would otherwise forget what
earlier invocations paid. Each invocation of ``run``, ``evaluate`` or ``sanitize`` therefore keeps one entry in
``<task dir>/usage.json`` (tokens, requests, adapter calls, retries... per role, and judge call counts), saved as the
invocation pays — at most every :data:`SAVE_EVERY_S` seconds while its engines make calls, so even a ``kill -9``
loses at most that much of the record — and again when the command stops for any reason it can catch (SIGTERM
included); results carry the per-invocation list and the total.
The ledger is written under the task directory's lock (:mod:`privasis_bench.pipeline.lock`), atomically.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from privasis_bench.engine.executor import Engine, usage_by_role
from privasis_bench.results.files import atomic_write_text, dumps_json

LEDGER_NAME = "usage.json"
LEDGER_FORMAT = "privasis-bench/usage/1"
#: While an invocation runs, its ledger entry is rewritten at most this often when its spend changed.
SAVE_EVERY_S = 0.5


def usage_delta(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-role usage accumulated between two :func:`usage_by_role` snapshots (engines outlive tasks)."""
    return {role: {k: v - before.get(role, {}).get(k, 0) for k, v in row.items()} for role, row in after.items()}


def _add(total: dict[str, Any], part: Mapping[str, Any]) -> None:
    for key, value in part.items():
        if isinstance(value, Mapping):
            _add(total.setdefault(key, {}), value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value


def ledger_total(invocations: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum of ``usage`` (per role) and ``judge_calls`` over ledger entries."""
    total: dict[str, Any] = {"invocations": 0, "usage": {}, "judge_calls": {}}
    for entry in invocations:
        total["invocations"] += 1
        _add(total["usage"], entry.get("usage") or {})
        _add(total["judge_calls"], entry.get("judge_calls") or {})
    return total


def read_ledger(task_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The invocations recorded in ``<task_dir>/usage.json`` (an unreadable ledger starts afresh, kept aside)."""
    path = Path(task_dir) / LEDGER_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [dict(e) for e in data["invocations"]]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError):
        path.replace(path.with_name(path.name + ".unreadable"))
        return []


class InvocationSpend:
    """What this invocation paid in one task directory, measured on the engines it used."""

    def __init__(self, task_dir: str | os.PathLike[str], command: str, engines: Callable[[], Iterable[Engine]]) -> None:
        self.task_dir, self.command, self._engines = Path(task_dir), command, engines
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.started = now()
        self._before = usage_by_role(engines())
        self._judge_calls: dict[str, int] = {}
        self._lock = threading.Lock()  # the periodic saver and the command's own saves write one file
        self._saved: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._saver: threading.Thread | None = None

    def usage(self) -> dict[str, dict[str, Any]]:
        """Per-role usage since this invocation started working in the task directory."""
        return usage_delta(self._before, usage_by_role(self._engines()))

    def save(self, judge_calls: Mapping[str, int] | None = None) -> dict[str, Any]:
        """Record (or update) this invocation in the ledger; returns every invocation and the total."""
        with self._lock:
            if judge_calls is not None:
                self._judge_calls = dict(judge_calls)
            usage = self.usage()
            entry = {"id": self.id, "command": self.command, "started": self.started, "finished": now(),
                     "usage": usage, "judge_calls": self._judge_calls}
            invocations = [e for e in read_ledger(self.task_dir) if e.get("id") != self.id] + [entry]
            atomic_write_text(self.task_dir / LEDGER_NAME,
                              dumps_json({"format": LEDGER_FORMAT, "invocations": invocations}))
            self._saved = usage
            return {"invocations": invocations, "total": ledger_total(invocations)}

    def start_saving(self) -> None:
        """Save the ledger entry in the background whenever the spend changed (at most every SAVE_EVERY_S)."""
        def loop() -> None:
            while not self._stop.wait(SAVE_EVERY_S):
                try:
                    if self.usage() != self._saved:
                        self.save()
                except Exception:  # noqa: BLE001 - a failed background save is retried; the final save reports
                    continue

        self._saver = threading.Thread(target=loop, name="privasis-spend-ledger", daemon=True)
        self._saver.start()

    def stop_saving(self) -> None:
        """Stop the background saver (the caller saves once more itself)."""
        self._stop.set()
        if self._saver is not None:
            self._saver.join()


@contextmanager
def recorded_spend(task_dir: str | os.PathLike[str], command: str,
                   engines: Callable[[], Iterable[Engine]]) -> Iterator[InvocationSpend]:
    """Measure what the ``with`` block pays in ``task_dir``; its ledger entry is saved however the block ends."""
    spend = InvocationSpend(task_dir, command, engines)
    spend.start_saving()
    try:
        yield spend
    finally:
        spend.stop_saving()
        spend.save()


def now() -> str:
    """UTC timestamp in ISO 8601."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
