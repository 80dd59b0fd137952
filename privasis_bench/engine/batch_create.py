"""Creating provider batches one at a time per cache file, each recorded and counted before the next is created.

A wave of requests may go out as many batches. Were they created in parallel, a kill could leave several of them
created at the provider with no id written down; a provider that keeps no tag on a batch (Anthropic) can then not
tell them apart, and a resumed run would ask their requests again (paid twice). :class:`BatchCreator` therefore
creates the batches recorded in one cache file under one lock: the batch's row is written, the provider creates it,
its id is written into the row and its requests are counted on the spend ledger (:data:`~.stats.PAID`), and only
then may the next batch be created. At any moment at most one batch of the cache is unrecorded, and every recorded id
has its requests counted. Once the command is interrupted (:meth:`~.stats.StatsChanges.stop_counting`) nothing is
created, recorded or counted any more: the ledger's last save is exact, and the next run finds a batch created in the
meantime by its tag and counts it then. The answers of an ended batch land the same way (:meth:`BatchCreator.land`):
stored, their tokens counted (the engine counts no tokens of a batched call itself) and the row removed, under the
lock and on the ledger before anything else happens.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from privasis_bench.adapters.base import AdapterError, ChatResult, Usage
from privasis_bench.adapters.batch_api import BatchClient
from privasis_bench.engine.batch_store import BatchStore
from privasis_bench.engine.stats import PAID

_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def creation_lock(path: object) -> threading.Lock:
    """The lock under which the batches recorded in one cache file are created, one at a time, in this process."""
    with _GUARD:
        return _LOCKS.setdefault(str(path), threading.Lock())


@dataclass
class Created:
    """What creating (or recording) one batch came to."""

    tag: str
    batch_id: str | None = None
    error: AdapterError | None = None  # the provider refused, or the reply was lost (the batch may exist)
    stopped: bool = False  # the command was interrupted: nothing was created, or the batch is left unrecorded


class BatchCreator:
    """Creates and records one engine's batches (its methods run in worker threads)."""

    def __init__(self, client: BatchClient, store: BatchStore, *, spec_key: str, role: str,
                 on_sent: Callable[[int], None] | None = None, keep: Callable[[str, ChatResult], None] | None = None,
                 on_paid: Callable[[Usage], None] | None = None) -> None:
        self.client, self.store, self.spec_key, self.role, self.on_sent = client, store, spec_key, role, on_sent
        self.keep, self.on_paid = keep, on_paid
        #: Keys whose request the spend ledger counts already (this run or an earlier one).
        self.counted: set[str] = set()

    def create(self, lines: list[dict[str, Any]], keys: list[str]) -> Created:
        """Record the batch, have the provider create it, record its id and count its requests, with no other batch
        of this cache file created meanwhile."""
        with creation_lock(self.store.path):
            with PAID.counting() as going:
                if not going:
                    return Created("", stopped=True)
                tag = f"pb-{int(time.time())}-{len(keys)}-{uuid.uuid4().hex[:16]}"  # see anthropic_batch.find
                self.store.add(tag, self.spec_key, self.role, keys)  # durable before the provider hears of it
            try:
                batch_id = self.client.submit(lines, tag)
            except AdapterError as exc:
                return Created(tag, error=exc)
            return self.record(tag, batch_id, keys)

    def record(self, tag: str, batch_id: str, keys: list[str], lock: bool = False) -> Created:
        """Write the provider's id into the batch's row and count its requests, both or neither (neither once the
        command was interrupted); then wait until the spend ledger on disk has them. ``lock``: take the cache file's
        creation lock first (a batch found again by its tag)."""
        if lock:
            with creation_lock(self.store.path):
                return self.record(tag, batch_id, keys)
        with PAID.counting() as going:
            if not going:
                return Created(tag, batch_id, stopped=True)
            self.store.set_provider_id(tag, batch_id)  # from here on, a resumed run knows the batch was counted
            fresh = [k for k in dict.fromkeys(keys) if k not in self.counted]  # a request asked again is a retry
            self.counted.update(fresh)
            if self.on_sent is not None and fresh:
                self.on_sent(len(fresh))
        if fresh:
            PAID.settle()
        return Created(tag, batch_id)

    def land(self, tag: str, answers: dict[str, ChatResult]) -> bool:
        """An ended batch's answers: into the response cache, their tokens counted, the batch's row removed, then on
        the spend ledger, with no batch of this cache file created meanwhile. False (nothing done: the next run
        collects the batch) once the command was interrupted."""
        with creation_lock(self.store.path):
            with PAID.counting() as going:
                if not going:
                    return False
                paid = Usage()
                for key, answer in answers.items():
                    if self.keep is not None:
                        self.keep(key, answer)
                    paid.add(answer.usage)
                if self.on_paid is not None:
                    self.on_paid(paid)
                self.store.remove(tag)
            PAID.settle()
        return True
