"""OpenAI's Batch API (and any OpenAI-compatible ``base_url`` offering it): Files + Batches over JSONL.

A batch is one uploaded JSONL file (``purpose=batch``), one line per request
(``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``), and one ``POST /batches`` naming it,
tagged with ``metadata.privasis_batch`` so that a batch whose id never reached the cache can be found again. Its
status runs validating -> in_progress -> finalizing -> completed (or failed / expired / cancelling -> cancelled);
answers are in ``output_file_id``, per-request errors in ``error_file_id``, one line per ``custom_id`` each. A batch
that ends ``failed`` ran nothing (``errors`` says why: e.g. ``token_limit_exceeded``, the organisation's queued
tokens); its state carries that error, and the engine splits the batch.
"""

from __future__ import annotations

import json
from typing import Any

from privasis_bench.adapters.base import AdapterError, ChatRequest, ChatResult
from privasis_bench.adapters.batch_api import BatchState, BatchUnsupported
from privasis_bench.adapters.http_errors import classify_sdk_error, is_retryable_status, scrub
from privasis_bench.adapters.openai_adapter import OpenAIAdapter, parse_chat_completion

ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
TAG_FIELD = "privasis_batch"
#: The provider's documented per-batch limits (requests, input file bytes).
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024
#: Error codes of a failed batch that a smaller batch, or a later one, can get past (an organisation's queued tokens).
LIMIT_CODES = frozenset({"token_limit_exceeded", "rate_limit_exceeded", "too_many_requests"})
_FIND_PAGES = 10  # batches listed (100 a page) when looking for an unrecorded one


class OpenAIBatchClient:
    """Files + Batches through the official ``openai`` SDK (blocking calls)."""

    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(self, adapter: OpenAIAdapter) -> None:
        self.adapter = adapter
        self.client = adapter.sync_client()
        self.where = adapter.base_url or "api.openai.com"

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import openai

        try:
            return fn(*args, **kwargs)
        except openai.OpenAIError as exc:
            raise classify_sdk_error(exc, openai, provider="openai batch", secrets=self.adapter.secrets) from None

    def check(self) -> None:
        """Raise BatchUnsupported when ``GET /batches`` is missing (404/405/501)."""
        try:
            self._call(self.client.batches.list, limit=1)
        except AdapterError as exc:
            if exc.status in (404, 405, 501):
                raise BatchUnsupported(f"openai:{self.adapter.model} at {self.where} offers no batch endpoints "
                                       f"(GET /batches: HTTP {exc.status}); run without --batch for this role") from None

    def line(self, custom_id: str, request: ChatRequest) -> dict[str, Any]:
        """One JSONL entry: the same body a live call posts to /chat/completions."""
        body = self.adapter.request_kwargs(request)
        body.update(body.pop("extra_body", None) or {})
        return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}

    def submit(self, lines: list[dict[str, Any]], tag: str) -> str:
        """Upload the input file and create the batch (24h window) tagged ``tag``; the batch id."""
        data = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode("utf-8")
        upload = self._call(self.client.files.create, file=(f"{tag}.jsonl", data), purpose="batch")
        batch = self._call(self.client.batches.create, input_file_id=upload.id, endpoint="/v1/chat/completions",
                           completion_window="24h", metadata={TAG_FIELD: tag})
        return str(batch.id)

    def find(self, tag: str, known: frozenset[str] = frozenset()) -> str | None:
        """A batch created with ``tag`` among the most recent ones, or None."""
        page = self._call(self.client.batches.list, limit=100)
        for _ in range(_FIND_PAGES):
            for batch in page.data:
                if (batch.metadata or {}).get(TAG_FIELD) == tag:
                    return str(batch.id)
            if not page.has_next_page():
                return None
            page = self._call(page.get_next_page)
        return None

    def poll(self, batch_id: str) -> BatchState:
        """The batch's status and request counts."""
        batch = self._call(self.client.batches.retrieve, batch_id)
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts else 0
        return BatchState(str(batch.status), str(batch.status) in ENDED, done, counts.total if counts else 0,
                          self._failure(batch))

    def _failure(self, batch: Any) -> AdapterError | None:
        """Why a ``failed`` batch ran nothing: its first error; a queued-token limit is a 429, the rest a 400."""
        if str(batch.status) != "failed":
            return None
        first = next(iter(getattr(batch.errors, "data", None) or []), None)
        code = str(getattr(first, "code", None) or "failed")
        message = getattr(first, "message", None) or "the batch failed as a whole"
        limit = code in LIMIT_CODES
        return AdapterError(scrub(f"openai batch failed ({code}): {message}"[:600], self.adapter.secrets),
                            retryable=limit, status=429 if limit else 400)

    def results(self, batch_id: str) -> dict[str, ChatResult | AdapterError]:
        """Answers and per-request errors of an ended batch (unreadable lines are left out: not answered)."""
        batch = self._call(self.client.batches.retrieve, batch_id)
        out: dict[str, ChatResult | AdapterError] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            text = self._call(self.client.files.content, file_id).text
            for raw in text.splitlines():
                parsed = self._outcome(raw)
                if parsed is not None:
                    out[parsed[0]] = parsed[1]
        return out

    def _outcome(self, raw: str) -> tuple[str, ChatResult | AdapterError] | None:
        from openai.types.chat import ChatCompletion

        try:
            line = json.loads(raw)
            custom_id = str(line["custom_id"])
        except (ValueError, KeyError, TypeError):
            return None
        response = line.get("response") or {}
        status = response.get("status_code") if isinstance(response, dict) else None
        if status == 200:
            try:
                return custom_id, parse_chat_completion(ChatCompletion.model_validate(response.get("body") or {}))
            except (ValueError, AdapterError) as exc:
                return custom_id, AdapterError(f"openai batch: malformed answer for {custom_id}: {exc}"[:300],
                                               retryable=True)
        error = line.get("error") or ((response.get("body") or {}).get("error") if isinstance(response, dict) else None)
        message = error.get("message") if isinstance(error, dict) else str(error or "no answer")
        code = f"HTTP {status}" if status else str((error or {}).get("code") if isinstance(error, dict) else "error")
        retryable = is_retryable_status(int(status)) if isinstance(status, int) else True
        return custom_id, AdapterError(scrub(f"openai batch {code}: {message}"[:600], self.adapter.secrets),
                                       retryable=retryable, status=status if isinstance(status, int) else None)
