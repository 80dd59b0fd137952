"""The spend ledger of a task directory: what every invocation that worked there paid, and the total.

``results.json`` describes the invocation that wrote it; a resumed or no-op re-run would otherwise forget what
earlier invocations paid. Each invocation of ``run``, ``evaluate`` or ``sanitize`` therefore keeps one entry in
``<task dir>/usage.json`` (tokens, requests, adapter calls, retries... per role, and judge call counts); results
carry the per-invocation list and the total (``usage_cumulative``).

* ``requests`` counts only requests that reached the server (a cache hit or a call still queued is no request;
  ``asked`` counts those too).
* The entry is written when the invocation starts, with ``ended: "running"``, and again after every paid call
  (the saver waits on :data:`privasis_bench.engine.stats.PAID`, so a ``kill -9`` loses at most the calls in
  flight); when the command stops in a way it can catch (success, an error, Ctrl-C, SIGTERM), the entry is saved
  exactly and ``ended`` says how (``completed``, ``failed``, ``interrupted``).
* An entry still ``running`` that is not this invocation's was ended by a kill (the ledger is only written under the
  task directory's exclusive lock, :mod:`privasis_bench.pipeline.lock`, so its writer is gone): the next invocation
  marks it ``killed`` with a note that the calls in flight at the kill may be missing, and says so on the console.
The ledger is written atomically.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from privasis_bench.engine.executor import Engine, usage_by_role
from privasis_bench.engine.stats import PAID
from privasis_bench.results.files import atomic_write_text, dumps_json
from privasis_bench.results.record import now

LEDGER_NAME = "usage.json"
LEDGER_FORMAT = "privasis-bench/usage/1"
#: While an invocation runs, its ledger entry is rewritten after each paid call, and at least this often when
#: anything else changed (cache hits).
SAVE_EVERY_S = 0.5
#: What the ledger says of an invocation found ``running`` by a later one.
KILLED_NOTE = "ended by a kill (SIGKILL, a crash or a power cut): the calls in flight at that moment may be missing"


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
    total: dict[str, Any] = {"invocations": 0, "killed_invocations": 0, "usage": {}, "judge_calls": {}}
    for entry in invocations:
        total["invocations"] += 1
        total["killed_invocations"] += entry.get("ended") == "killed"
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
        self.ended = "running"
        #: Earlier invocations this one found ended by a kill (marked ``killed`` in the ledger).
        self.killed: list[dict[str, Any]] = []

    def usage(self) -> dict[str, dict[str, Any]]:
        """Per-role usage since this invocation started working in the task directory."""
        return usage_delta(self._before, usage_by_role(self._engines()))

    def save(self, judge_calls: Mapping[str, int] | None = None) -> dict[str, Any]:
        """Record (or update) this invocation in the ledger; returns every invocation and the total."""
        with self._lock:
            if judge_calls is not None:
                self._judge_calls = dict(judge_calls)
            usage = self.usage()
            entry = {"id": self.id, "command": self.command, "pid": os.getpid(), "started": self.started,
                     "finished": now(), "ended": self.ended, "usage": usage, "judge_calls": self._judge_calls}
            invocations = [self._settled(e) for e in read_ledger(self.task_dir) if e.get("id") != self.id] + [entry]
            atomic_write_text(self.task_dir / LEDGER_NAME,
                              dumps_json({"format": LEDGER_FORMAT, "invocations": invocations}))
            self._saved = usage
            return {"invocations": invocations, "total": ledger_total(invocations)}

    def _settled(self, entry: dict[str, Any]) -> dict[str, Any]:
        """An earlier entry, marked ``killed`` when it is still ``running`` (its writer is gone: we hold the lock)."""
        if entry.get("ended") == "running":
            entry = {**entry, "ended": "killed", "note": KILLED_NOTE}
            self.killed.append(entry)
        return entry

    def finish(self, ended: str, judge_calls: Mapping[str, int] | None = None) -> dict[str, Any]:
        """Record how this invocation ended (``completed``, ``failed``, ``interrupted``) with its exact spend."""
        self.ended = ended
        return self.save(judge_calls)

    def killed_lines(self) -> list[str]:
        """One console line per earlier invocation found ended by a kill."""
        return [f"{self.task_dir}: an earlier `{e.get('command', '?')}` (pid {e.get('pid', '?')}, started "
                f"{e.get('started', '?')}) was killed; its spend on the ledger (usage.json) may lack the calls that "
                "were in flight then" for e in self.killed]

    def start_saving(self) -> None:
        """Save the entry now (as ``running``), then in the background after every paid call (see PAID)."""
        first = PAID.count
        PAID.saving(self.id, first)  # from now on a batch broker waits for this ledger (PAID.settle)
        try:
            self.save()
        except BaseException:
            PAID.saving(self.id, None)
            raise

        def loop() -> None:
            seen = first
            while not self._stop.is_set():
                seen = PAID.wait(seen, SAVE_EVERY_S)
                if self._stop.is_set():
                    break
                try:
                    if self.usage() != self._saved:
                        self.save()
                    PAID.saving(self.id, seen)  # a batch broker waiting for its count to be on disk goes on
                except Exception:  # noqa: BLE001 - a failed background save is retried; the final save reports
                    continue
            PAID.saving(self.id, None)

        self._saver = threading.Thread(target=loop, name="privasis-spend-ledger", daemon=True)
        self._saver.start()

    def stop_saving(self) -> None:
        """Stop the background saver (the caller saves once more itself)."""
        self._stop.set()
        PAID.mark()  # wake the saver
        if self._saver is not None:
            self._saver.join()


@contextmanager
def recorded_spend(task_dir: str | os.PathLike[str], command: str,
                   engines: Callable[[], Iterable[Engine]]) -> Iterator[InvocationSpend]:
    """Measure what the ``with`` block pays in ``task_dir``; its ledger entry is saved however the block ends."""
    spend = InvocationSpend(task_dir, command, engines)
    spend.start_saving()
    ended = "failed"
    try:
        yield spend
        ended = "completed"
    except KeyboardInterrupt:  # Ctrl-C, and SIGTERM (the CLI turns it into one)
        ended = "interrupted"
        raise
    finally:
        spend.stop_saving()
        spend.finish(ended)


