"""Anthropic's Message Batches API (``client.messages.batches``): one ``POST /v1/messages/batches`` per batch.

Each request is ``{"custom_id", "params"}`` with the same parameters a live ``messages.create`` call sends; the
batch's ``processing_status`` runs in_progress -> (canceling ->) ended, and its results (``.jsonl``, one line per
``custom_id``) say ``succeeded`` (a Message), ``errored``, ``canceled`` or ``expired``. A Message Batch carries no
metadata, so a batch whose id never reached the cache is found again by its creation time and request count, which
the harness's tag records (``pb-<unix time>-<requests>-<random>``), leaving out every batch id the cache recorded.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.adapters.anthropic_adapter import AnthropicAdapter, parse_message
from privasis_bench.adapters.base import AdapterError, ChatRequest, ChatResult
from privasis_bench.adapters.batch_api import BatchState, BatchUnsupported
from privasis_bench.adapters.http_errors import classify_sdk_error, scrub

MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024 * 1024
#: Error types of an errored request that a later try can fix (the rest are the request's own fault).
_RETRYABLE_ERRORS = frozenset({"api_error", "overloaded_error", "rate_limit_error", "timeout_error"})
_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403, "not_found_error": 404,
           "request_too_large": 413, "rate_limit_error": 429, "api_error": 500, "overloaded_error": 529}
_FIND_WINDOW_S = 3600


class AnthropicBatchClient:
    """Message Batches through the official ``anthropic`` SDK (blocking calls)."""

    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(self, adapter: AnthropicAdapter) -> None:
        self.adapter = adapter
        self.client = adapter.sync_client()
        self.where = adapter.base_url or "api.anthropic.com"

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import anthropic

        try:
            return fn(*args, **kwargs)
        except anthropic.AnthropicError as exc:
            raise classify_sdk_error(exc, anthropic, provider="anthropic batch", secrets=self.adapter.secrets) from None

    def check(self) -> None:
        """Raise BatchUnsupported when ``GET /v1/messages/batches`` is missing."""
        try:
            self._call(self.client.messages.batches.list, limit=1)
        except AdapterError as exc:
            if exc.status in (404, 405, 501):
                raise BatchUnsupported(f"anthropic:{self.adapter.model} at {self.where} offers no message batches "
                                       f"(GET /v1/messages/batches: HTTP {exc.status}); run without --batch for this "
                                       "role") from None

    def line(self, custom_id: str, request: ChatRequest) -> dict[str, Any]:
        """One batch request: the parameters a live ``messages.create`` sends."""
        params = self.adapter.request_kwargs(request)
        params.update(params.pop("extra_body", None) or {})
        return {"custom_id": custom_id, "params": params}

    def submit(self, lines: list[dict[str, Any]], tag: str) -> str:
        """Create the batch; its id."""
        batch = self._call(self.client.messages.batches.create, requests=lines)
        return str(batch.id)

    def find(self, tag: str, known: frozenset[str] = frozenset()) -> str | None:
        """The one recent batch, among those not ``known`` (ids this cache recorded), created within the tag's hour
        with the tag's request count; None when there is none or more than one."""
        try:
            _, created, count, _ = tag.split("-", 3)
            since, count_n = float(created) - 60, int(count)
        except ValueError:
            return None
        found = []
        for batch in self._call(self.client.messages.batches.list, limit=100).data:
            when = batch.created_at.timestamp()
            c = batch.request_counts
            total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
            if since <= when <= since + _FIND_WINDOW_S and total == count_n and str(batch.id) not in known:
                found.append(str(batch.id))
        return found[0] if len(found) == 1 else None

    def poll(self, batch_id: str) -> BatchState:
        """processing_status and request counts."""
        batch = self._call(self.client.messages.batches.retrieve, batch_id)
        c = batch.request_counts
        answered = c.succeeded + c.errored
        total = answered + c.processing + c.canceled + c.expired
        return BatchState(str(batch.processing_status), batch.processing_status == "ended", answered, total)

    def results(self, batch_id: str) -> dict[str, ChatResult | AdapterError]:
        """Every line of the ended batch's results: an answer, or why there is none."""
        out: dict[str, ChatResult | AdapterError] = {}
        decoder = self._call(self.client.messages.batches.results, batch_id)
        try:
            for entry in decoder:
                out[str(entry.custom_id)] = self._outcome(entry.result)
        except ValueError:  # a malformed line: what was read is kept, the rest is asked again
            pass
        return out

    def _outcome(self, result: Any) -> ChatResult | AdapterError:
        kind = getattr(result, "type", None)
        if kind == "succeeded":
            try:
                return parse_message(result.message)
            except AdapterError as exc:
                return exc
        if kind == "errored":
            error = getattr(getattr(result, "error", None), "error", None)
            etype = str(getattr(error, "type", "api_error"))
            message = scrub(f"anthropic batch {etype}: {getattr(error, 'message', '')}"[:600], self.adapter.secrets)
            return AdapterError(message, retryable=etype in _RETRYABLE_ERRORS, status=_STATUS.get(etype))
        return AdapterError(f"anthropic batch: request {kind} before it was answered", retryable=True)
