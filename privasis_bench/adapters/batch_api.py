"""The provider batch contract: what a batch client (OpenAI Files + Batches, Anthropic Message Batches) offers.

A :class:`BatchClient` turns chat requests into the provider's batch lines, submits a list of them as one batch
(tagged with the harness's own id, so a batch created by a process that died before it wrote the provider's id
down can still be found), reports its state, and reads its results back as one :class:`ChatResult` or one
:class:`AdapterError` per request id. The engine (``privasis_bench.engine.batch_broker``) does everything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from privasis_bench.adapters.base import AdapterError, ChatRequest, ChatResult
from privasis_bench.errors import PrivasisError


class BatchUnsupported(PrivasisError):
    """The provider (or its base_url) offers no batch endpoints: said once, at start."""


@dataclass(frozen=True)
class BatchState:
    """Where a submitted batch stands. ``ended``: nothing more will be answered (completed, failed, expired,
    cancelled); ``status`` is the provider's own word for it; ``error``: why the batch failed as a whole (the
    provider refused to run any of it, e.g. a limit on queued tokens or an invalid input file), classified as the
    same error on one live call would be."""

    status: str
    ended: bool
    answered: int = 0
    total: int = 0
    error: AdapterError | None = None


Outcome = "ChatResult | AdapterError"


class BatchClient(Protocol):
    """One provider's batch interface (synchronous: the engine calls it in a worker thread)."""

    #: Most requests and bytes the provider takes in one batch (bigger groups are split).
    max_requests: int
    max_bytes: int

    def check(self) -> None:
        """Raise :class:`BatchUnsupported` (one line) when the endpoint offers no batches."""

    def line(self, custom_id: str, request: ChatRequest) -> dict[str, Any]:
        """The provider's batch entry for one request."""

    def submit(self, lines: list[dict[str, Any]], tag: str) -> str:
        """Create the batch; return the provider's batch id (an AdapterError with status 413 or 429 when the provider
        refuses it for its size or a rate limit: the engine then splits it)."""

    def find(self, tag: str, known: frozenset[str] = frozenset()) -> str | None:
        """The id of a batch created earlier with this tag, or None; ``known``: ids already accounted for (a provider
        whose batches carry no tag must not mistake one of them for the one sought)."""

    def poll(self, batch_id: str) -> BatchState:
        """The batch's state now."""

    def results(self, batch_id: str) -> dict[str, ChatResult | AdapterError]:
        """Every answer the ended batch holds, by custom id (a missing id: not answered)."""
