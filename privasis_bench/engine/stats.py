"""What an engine counted: requests, cache hits, failures, retries, rejected answers and the tokens paid for."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from privasis_bench.adapters.base import Usage

#: The integer counters of :class:`EngineStats` that are summed per role.
COUNTERS: tuple[str, ...] = ("requests", "batches", "cached", "failed", "retries", "timeouts", "rejected_answers",
                             "truncated", "asked")


@dataclass
class EngineStats:
    """Counters over every run of one engine (``usage`` counts fresh calls only: what was paid).

    ``requests``: chat requests that reached the adapter (the server), counted when their first attempt starts:
    no cache hit, no request still queued behind the concurrency limit; ``asked``: chat requests asked of the
    engine (cache hits and queued ones included); ``batches``: calls made to the
    adapter, each carrying one request or, for an adapter that answers in batches (llama.cpp, vLLM offline),
    many at once, so ``batches`` can be far below ``requests``; ``rejected_answers``: answers that arrived but
    were empty or cut at the token budget and were asked again (or given up on); ``truncated``: answers cut at the token budget that were accepted as they are;
    ``timeouts``: attempts that got no reply in time; ``faults``: failed attempts by kind (``HTTP 429``,
    ``timeout``, ``connection``...), for the end-of-run summary of a degrading server.
    """

    requests: int = 0
    done: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    batches: int = 0  # adapter calls (one may carry many requests)
    timeouts: int = 0
    rejected_answers: int = 0
    truncated: int = 0
    asked: int = 0
    faults: Counter = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    cached_usage: Usage = field(default_factory=Usage)

    def absorb(self, other: "EngineStats") -> None:
        """Add ``other``'s counts and tokens to these (e.g. what a Ray worker's engine did for this engine's role)."""
        self.done += other.done
        for name in COUNTERS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.faults.update(other.faults)
        self.usage.add(other.usage)
        self.cached_usage.add(other.cached_usage)

    def to_dict(self) -> dict[str, Any]:
        return {
            "done": self.done,
            **{name: getattr(self, name) for name in COUNTERS},
            "faults": dict(self.faults),
            "usage": {**self.usage.to_dict(), "total_tokens": self.usage.total_tokens},
            "cached_usage": {**self.cached_usage.to_dict(), "total_tokens": self.cached_usage.total_tokens},
        }


class StatsChanges:
    """A process-wide signal that some engine paid for something (a request sent, a fresh answer landed).

    The spend ledger's saver waits on it, so an invocation's ledger entry follows each paid call within one file
    write instead of a fixed period: a ``kill -9`` then loses at most the calls in flight.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.count = 0
        self._saved: dict[str, int] = {}  # running ledger savers -> the count their last save covered
        self._gate = threading.RLock()  # held while a provider batch is recorded and counted (see counting)
        self._stopped = False

    def stop_counting(self) -> None:
        """The command was interrupted (Ctrl-C, SIGTERM): from now on no batch is created, recorded or counted, so
        the ledger's last save has every request that a recorded batch holds (called by the signal handler, before
        the interrupt unwinds to that save; a batch a worker thread creates after this stays unrecorded, and the
        next run finds it by its tag and counts it)."""
        with self._gate:
            self._stopped = True

    def resume_counting(self) -> None:
        """A new command starts in this process (tests run several)."""
        with self._gate:
            self._stopped = False

    @contextmanager
    def counting(self) -> Iterator[bool]:
        """Hold the gate while a batch is recorded and counted; yields False once the command was interrupted."""
        with self._gate:
            yield not self._stopped

    def mark(self) -> None:
        """Say that something was paid for (cheap; called from the engines' event loop)."""
        with self._cond:
            self.count += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> int:
        """Wait until the count differs from ``seen`` (or ``timeout`` seconds); returns the count."""
        with self._cond:
            self._cond.wait_for(lambda: self.count != seen, timeout)
            return self.count

    def saving(self, saver: str, covered: int | None) -> None:
        """A ledger saver's save covers every mark up to ``covered`` (None: the saver stopped)."""
        with self._cond:
            if covered is None:
                self._saved.pop(saver, None)
            else:
                self._saved[saver] = covered
            self._cond.notify_all()

    def settle(self, timeout: float = 10.0) -> bool:
        """Mark, then wait until every running ledger saver has saved past that mark (a blocking call, for a
        worker thread): what was counted before is on disk before the caller goes on. False on timeout."""
        with self._cond:
            self.count += 1
            target = self.count
            self._cond.notify_all()
            return self._cond.wait_for(lambda: all(n >= target for n in self._saved.values()), timeout)


#: The one signal of this process (see :class:`StatsChanges`).
PAID = StatsChanges()


def fault_summary(role: str, spec: str, stats: EngineStats) -> str | None:
    """One line on the faults an engine met and retried (None when it met none): for the end of a run."""
    if not stats.faults and not stats.retries:
        return None
    kinds = ", ".join(f"{kind} x{n}" for kind, n in stats.faults.most_common())
    return (f"{role} {spec}: {stats.retries} retr{'y' if stats.retries == 1 else 'ies'} over "
            f"{stats.batches} adapter call(s); faults: {kinds or 'none'}; {stats.failed} request(s) failed in the end")


class _HasStats(Protocol):
    role: str
    stats: EngineStats


def usage_by_role(engines: Iterable[_HasStats]) -> dict[str, dict[str, Any]]:
    """Sum the stats of several engines per role (e.g. ``{"model": {...}, "judge": {...}}``)."""
    out: dict[str, dict[str, Any]] = {}
    for engine in engines:
        s = engine.stats
        row = out.setdefault(engine.role, {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                                           **{name: 0 for name in COUNTERS}})
        row["prompt_tokens"] += s.usage.prompt_tokens
        row["completion_tokens"] += s.usage.completion_tokens
        row["total_tokens"] += s.usage.total_tokens
        for name in COUNTERS:
            row[name] += getattr(s, name)
        if getattr(getattr(engine, "adapter", None), "sent_in_batches", False):  # --batch: this spend was batched
            for name, value in (("batched_requests", s.requests), ("batched_prompt_tokens", s.usage.prompt_tokens),
                                ("batched_completion_tokens", s.usage.completion_tokens)):
                row[name] = row.get(name, 0) + value
    return out


@dataclass
class BusyClock:
    """Where an engine's time went: wall seconds with at least one call in flight, and the calls' summed seconds."""

    busy_seconds: float = 0.0
    call_seconds: float = 0.0
    _in_flight: int = 0
    _since: float = 0.0

    def start(self) -> float:
        """Mark a call as started; returns its start time for :meth:`stop`."""
        now = time.monotonic()
        if self._in_flight == 0:
            self._since = now
        self._in_flight += 1
        return now

    def stop(self, started: float) -> None:
        """Mark the call that started at ``started`` as finished."""
        now = time.monotonic()
        self.call_seconds += now - started
        self._in_flight -= 1
        if self._in_flight == 0:
            self.busy_seconds += now - self._since
