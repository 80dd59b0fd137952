"""The Anthropic half of :mod:`fake_batch_server`: ``POST /v1/messages`` (live) and Message Batches.

``POST /v1/messages/batches`` (``requests`` of ``custom_id`` + ``params``), ``GET /v1/messages/batches/{id}``
(``processing_status`` in_progress -> ended), ``GET /v1/messages/batches`` (list), ``.../results`` (JSONL of
``succeeded`` / ``errored`` / ``canceled`` / ``expired``) and ``.../cancel``, with the same fault injection (a
batch ``refuse`` names is answered HTTP 413 ``request_too_large``) and
billing count as the OpenAI routes (the methods use the server's state: ``batches``, ``_answer``, ``_send``...).
"""

from __future__ import annotations

import json
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs


class AnthropicRoutes:
    """Mixed into :class:`fake_batch_server.FakeBatchServer`."""

    # -- Anthropic: /v1/messages and /v1/messages/batches
    def _anthropic(self, h: BaseHTTPRequestHandler, method: str, parts: list[str], raw: bytes, url: Any) -> None:
        if not parts and method == "POST":
            with self.lock:
                self.live_calls += 1
                status, payload = self._answer(json.loads(raw))
            self._send(h, status, _to_message(status, payload))
            return
        if not self.batch_endpoints:
            self._send(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": "no batches here"}})
            return
        if parts == ["batches"] and method == "POST":
            self._event("create")
            with self.lock:
                requests = json.loads(raw)["requests"]
                prompts = [str(r["params"]["messages"][-1]["content"]) for r in requests]
                if self.refuse is not None and self.refuse(prompts):
                    self.refused.append(len(requests))
                    self._send(h, 413, {"type": "error", "error": {
                        "type": "request_too_large", "message": f"injected: batch of {len(requests)} refused"}})
                    return
                order = len(self.batches) + 1
                batch = {"id": f"msgbatch_{uuid.uuid4().hex[:16]}", "type": "message_batch", "processing_status": "in_progress",
                         "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0, "canceled": 0,
                                            "expired": 0},
                         "ended_at": None, "created_at": _iso(time.time()), "expires_at": _iso(time.time() + 86400),
                         "cancel_initiated_at": None, "archived_at": None, "results_url": None,
                         "_order": order, "_t0": time.time(), "_requests": requests, "_kind": "anthropic", "metadata": None}
                self.batches[batch["id"]] = batch
                self._save()
            self._event("created")
            self._send(h, 200, self._public(batch))
            return
        if parts == ["batches"] and method == "GET":
            query = parse_qs(url.query)
            limit = int(query.get("limit", ["20"])[0])
            with self.lock:
                ordered = sorted((b for b in self.batches.values() if b.get("_kind") == "anthropic"), key=lambda b: -b["_order"])
                page = [self._public(b) for b in ordered[:limit]]
            self._send(h, 200, {"data": page, "has_more": len(ordered) > limit,
                                "first_id": page[0]["id"] if page else None, "last_id": page[-1]["id"] if page else None})
            return
        batch_id = parts[1] if len(parts) >= 2 else ""
        with self.lock:
            batch = self.batches.get(batch_id)
        if batch is None:
            self._send(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}})
            return
        if len(parts) == 3 and parts[2] == "results":
            self._event("content")
            self._send_text(h, batch["_results"])
            self._event("content_sent")
            return
        self._event("poll")
        with self.lock:
            if len(parts) == 3 and parts[2] == "cancel":
                batch["_cancel"] = True
            self._advance_anthropic(batch, f"http://{h.headers.get('Host')}/v1/messages/batches/{batch_id}/results")
            self._save()
            public = self._public(batch)
        self._send(h, 200, public)

    def _advance_anthropic(self, batch: dict[str, Any], results_url: str) -> None:
        if batch["processing_status"] == "ended":
            return
        cancel = bool(batch.get("_cancel")) or batch["_order"] in self.cancel
        if not cancel and time.time() - batch["_t0"] < self.latency:
            return
        order = batch["_order"]
        share = 0.0 if cancel else (0.5 if order in self.expire else 1.0)
        gone = "canceled" if cancel else "expired"
        answered = int(len(batch["_requests"]) * share)
        lines, counts = [], {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for i, request in enumerate(batch["_requests"]):
            if i >= answered:
                result: dict[str, Any] = {"type": gone}
                counts[gone] += 1
            else:
                status, payload = self._answer(request["params"])
                if status == 200:
                    result = {"type": "succeeded", "message": _to_message(status, payload)}
                    counts["succeeded"] += 1
                else:
                    result = {"type": "errored", "error": _to_message(status, payload)}
                    counts["errored"] += 1
            lines.append(json.dumps({"custom_id": request["custom_id"], "result": result}))
        if order in self.malformed:
            lines = lines[: len(lines) // 2] + ["{not json"] * (len(lines) - len(lines) // 2)
        batch["_results"] = "".join(x + "\n" for x in lines) if order not in self.missing else ""
        batch.update(processing_status="ended", request_counts=counts, ended_at=_iso(time.time()), results_url=results_url)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _to_message(status: int, payload: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-shaped answer (or error) as the Anthropic Messages API shapes it."""
    if status != 200:
        kind = "invalid_request_error" if status == 400 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": payload["error"]["message"]}}
    choice, usage = payload["choices"][0], payload["usage"]
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": payload["model"],
            "content": [{"type": "text", "text": choice["message"]["content"]}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]}}
