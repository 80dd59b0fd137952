"""A local OpenAI-compatible server with chat completions, Files and Batches, for batch tests and benchmarks.

It answers ``POST /v1/chat/completions`` live (the same deterministic replies as :mod:`fake_openai_server`) and
implements the batch endpoints the official SDK calls: ``POST /v1/files`` (multipart, purpose=batch),
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches`` (list, newest
first, ``limit`` / ``after``) and ``POST /v1/batches/{id}/cancel``. A batch is ``in_progress`` until ``latency``
seconds after it was created, then it is processed and ``completed``. Fault injection: batches (by their 1-based
order) that expire with half their requests answered, that come back with malformed or missing output files;
per-request errors; ``refuse(prompts)``, a batch refused as a whole (an OpenAI batch that ends ``failed`` with that
error code and runs nothing, an Anthropic create answered HTTP 413); no batch endpoints at all; and
``on_event(name, server)`` called before (``upload``,
``create``, ``poll``, ``content``) or after (``created``, ``content_sent``) a reply, e.g. to kill a client.
Everything is kept in ``state_path`` (when given), so a server started again on it has lost nothing.

``paid`` counts, per prompt, the requests a batch or a live call answered, and ``billed`` their prompt and completion
tokens: what a provider would bill.
"""

from __future__ import annotations

import email.parser
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from fake_anthropic_batches import AnthropicRoutes
from fake_openai_server import STOP_POLL_S, reply_for


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True
    block_on_close = False


class FakeBatchServer(AnthropicRoutes):
    """``with FakeBatchServer(...) as server:``; ``server.base_url`` ends in ``/v1``."""

    def __init__(self, *, latency: float = 0.0, state_path: Path | None = None, batches: bool = True,
                 expire: set[int] | None = None, cancel: set[int] | None = None, malformed: set[int] | None = None, missing: set[int] | None = None,
                 request_error: Callable[[str, int], int | None] | None = None,
                 refuse: Callable[[list[str]], str | None] | None = None,
                 on_event: Callable[[str, "FakeBatchServer"], None] | None = None,
                 reply: Callable[[str], str] = reply_for) -> None:
        self.latency, self.state_path, self.batch_endpoints = latency, state_path, batches
        self.expire, self.malformed, self.missing = expire or set(), malformed or set(), missing or set()
        self.cancel = cancel or set()  # batches cancelled on the provider's side (e.g. from its console)
        self.request_error, self.on_event, self.reply, self.refuse = request_error, on_event, reply, refuse
        self.refused: list[int] = []  # sizes of the batches refused as a whole
        self.lock = threading.RLock()
        self.files: dict[str, str] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.paid: Counter[str] = Counter()
        self.billed: Counter[str] = Counter()  # prompt_tokens, completion_tokens of the answered requests
        self.seen: Counter[str] = Counter()  # per prompt: requests processed (answered or failed)
        self.live_calls = 0
        self.http_calls: Counter[str] = Counter()
        if state_path is not None and state_path.exists():
            state = json.loads(state_path.read_text())
            self.files, self.batches = state["files"], state["batches"]
            self.paid, self.seen = Counter(state["paid"]), Counter(state["seen"])
            self.billed = Counter(state.get("billed") or {})
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle
    def start(self) -> "FakeBatchServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                server._route(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                server._route(self, "POST")

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, args=(STOP_POLL_S,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "FakeBatchServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def root_url(self) -> str:
        """The server without ``/v1`` (the Anthropic SDK adds it)."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _save(self) -> None:
        if self.state_path is not None:
            state = {"files": self.files, "batches": self.batches, "paid": dict(self.paid), "seen": dict(self.seen),
                     "billed": dict(self.billed)}
            tmp = self.state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state))
            tmp.replace(self.state_path)

    def _event(self, name: str) -> None:
        if self.on_event is not None:
            self.on_event(name, self)

    # -- routing
    def _route(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlparse(h.path)
        parts = [p for p in url.path.split("/") if p][1:]  # without the leading v1
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        with self.lock:
            self.http_calls[f"{method} /{parts[0] if parts else ''}"] += 1
        if parts == ["chat", "completions"] and method == "POST":
            with self.lock:
                self.live_calls += 1
                body = json.loads(raw)
                status, payload = self._answer(body)
            self._send(h, status, payload)
            return
        if parts and parts[0] == "messages":
            self._anthropic(h, method, parts[1:], raw, url)
            return
        if parts and parts[0] in ("files", "batches") and not self.batch_endpoints:
            self._send(h, 404, {"error": {"message": f"no route {url.path}", "type": "invalid_request_error"}})
            return
        if parts == ["files"] and method == "POST":
            self._event("upload")
            text = _multipart_file(h.headers.get("Content-Type", ""), raw)
            with self.lock:
                file_id = f"file-{uuid.uuid4().hex[:16]}"
                self.files[file_id] = text
                self._save()
            self._send(h, 200, {"id": file_id, "object": "file", "bytes": len(text.encode()), "created_at": int(time.time()),
                                "filename": "input.jsonl", "purpose": "batch", "status": "processed"})
            return
        if len(parts) == 3 and parts[0] == "files" and parts[2] == "content" and method == "GET":
            self._event("content")
            with self.lock:
                text = self.files.get(parts[1])
            if text is None:
                self._send(h, 404, {"error": {"message": "no such file", "type": "invalid_request_error"}})
                return
            self._send_text(h, text)
            self._event("content_sent")
            return
        if parts == ["batches"] and method == "POST":
            self._event("create")
            body = json.loads(raw)
            with self.lock:
                if body.get("input_file_id") not in self.files:
                    self._send(h, 400, {"error": {"message": "input file not found", "type": "invalid_request_error"}})
                    return
                batch = self._new_batch(body)
                self._save()
            self._event("created")
            self._send(h, 200, batch)
            return
        if parts == ["batches"] and method == "GET":
            query = parse_qs(url.query)
            limit, after = int(query.get("limit", ["20"])[0]), query.get("after", [None])[0]
            with self.lock:
                ordered = sorted((b for b in self.batches.values() if b.get("_kind") != "anthropic"),
                                 key=lambda b: -b["_order"])
                if after is not None:
                    ids = [b["id"] for b in ordered]
                    ordered = ordered[ids.index(after) + 1:] if after in ids else []
                page = [self._public(b) for b in ordered[:limit]]
            self._send(h, 200, {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                                "last_id": page[-1]["id"] if page else None, "has_more": len(ordered) > limit})
            return
        if len(parts) >= 2 and parts[0] == "batches":
            self._event("poll")
            with self.lock:
                batch = self.batches.get(parts[1])
                if batch is not None and len(parts) == 3 and parts[2] == "cancel":
                    batch["_cancel"] = True
                if batch is not None:
                    self._advance(batch)
                    self._save()
                    batch = self._public(batch)
            if batch is None:
                self._send(h, 404, {"error": {"message": "no such batch", "type": "invalid_request_error"}})
            else:
                self._send(h, 200, batch)
            return
        self._send(h, 404, {"error": {"message": f"no route {url.path}", "type": "invalid_request_error"}})

    # -- batches
    def _new_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        order = len(self.batches) + 1
        total = len(self.files[body["input_file_id"]].splitlines())
        batch = {"id": f"batch_{uuid.uuid4().hex[:16]}", "object": "batch", "endpoint": body.get("endpoint"),
                 "errors": None, "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window"),
                 "status": "validating", "output_file_id": None, "error_file_id": None, "created_at": int(time.time()),
                 "metadata": body.get("metadata") or None,
                 "request_counts": {"total": total, "completed": 0, "failed": 0},
                 "_order": order, "_t0": time.time()}
        self.batches[batch["id"]] = batch
        return self._public(batch)

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def settle(self) -> None:
        """Run every batch nobody collected to its end, as a provider does (and bills) whether or not it is polled."""
        with self.lock:
            latency, self.latency = self.latency, 0.0
            for batch in self.batches.values():
                if batch.get("_kind") == "anthropic":
                    self._advance_anthropic(batch, batch.get("results_url") or "")
                else:
                    self._advance(batch)
            self.latency = latency
            self._save()

    def _advance(self, batch: dict[str, Any]) -> None:
        if batch["status"] in ("completed", "expired", "cancelled", "failed"):
            return
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]].splitlines() if x.strip()]
        code = self.refuse([str(x["body"]["messages"][-1]["content"]) for x in lines]) if self.refuse else None
        if code:  # validation fails: nothing is run or billed
            self.refused.append(len(lines))
            batch.update(status="failed", errors={"object": "list", "data": [
                {"code": code, "message": f"injected: batch of {len(lines)} requests refused", "param": None,
                 "line": None}]})
            return
        if batch.get("_cancel") or batch["_order"] in self.cancel:
            self._process(batch, "cancelled", answer_share=0.0)
            return
        if time.time() - batch["_t0"] < self.latency:
            batch["status"] = "in_progress"
            return
        order = batch["_order"]
        self._process(batch, "expired" if order in self.expire else "completed",
                      answer_share=0.5 if order in self.expire else 1.0)

    def _process(self, batch: dict[str, Any], status: str, answer_share: float) -> None:
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]].splitlines() if x.strip()]
        answered = int(len(lines) * answer_share)
        out, err = [], []
        for i, line in enumerate(lines):
            if i >= answered:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                err.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"], "response": None,
                            "error": {"code": code, "message": f"This request could not be executed before the batch {status}."}})
                continue
            code, payload = self._answer(line["body"])
            entry = {"id": f"batch_req_{i}", "custom_id": line["custom_id"],
                     "response": {"status_code": code, "request_id": f"req_{i}", "body": payload}, "error": None}
            (out if code == 200 else err).append(entry)
        order = batch["_order"]
        if order in self.malformed:
            out = out[: len(out) // 2] + ["{not json"] * (len(out) - len(out) // 2)  # type: ignore[list-item]
        if out and order not in self.missing:
            batch["output_file_id"] = self._store_file(out)
        if err:
            batch["error_file_id"] = self._store_file(err)
        batch["status"] = status
        batch["request_counts"] = {"total": len(lines), "completed": sum(1 for x in out if isinstance(x, dict)),
                                   "failed": len(err)}

    def _store_file(self, entries: list[Any]) -> str:
        file_id = f"file-{uuid.uuid4().hex[:16]}"
        self.files[file_id] = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in entries)
        return file_id

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A chat completion for one request body (or an error), counted as paid when answered."""
        prompt = str(body["messages"][-1]["content"])
        seen = self.seen[prompt]
        self.seen[prompt] += 1
        status = self.request_error(prompt, seen) if self.request_error is not None else None
        if status:
            return status, {"error": {"message": f"injected HTTP {status}", "type": "server_error"}}
        self.paid[prompt] += 1
        text = self.reply(prompt)
        self.billed.update(prompt_tokens=len(prompt.split()), completion_tokens=len(text.split()))
        return 200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                     "model": body.get("model", "fake"),
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split()),
                               "total_tokens": len(prompt.split()) + len(text.split())}}

    # -- replies
    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass

    @staticmethod
    def _send_text(h: BaseHTTPRequestHandler, text: str) -> None:
        data = text.encode("utf-8")
        try:
            h.send_response(200)
            h.send_header("Content-Type", "application/octet-stream")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            h.wfile.flush()
        except OSError:
            pass


class KillAt:
    """An ``on_event`` hook for :class:`FakeBatchServer` that SIGKILLs (or sends ``sig`` to) the command :meth:`run`
    started when the fake sees ``event`` for the ``nth`` time (the fake's reply, if any, then goes to a dead process;
    with another signal, the fake replies at once, as a provider would)."""

    def __init__(self, event: str, nth: int = 1, sig: int = signal.SIGKILL) -> None:
        self.event, self.nth, self.count, self.sig = event, nth, 0, sig
        self.killed = threading.Event()
        self.proc: subprocess.Popen | None = None

    def __call__(self, name: str, server: FakeBatchServer) -> None:
        if name != self.event or self.killed.is_set() or self.proc is None:
            return
        self.count += 1
        if self.count == self.nth:
            self.killed.set()
            os.kill(self.proc.pid, self.sig)
            if self.sig == signal.SIGKILL:
                self.proc.wait(30)

    def run(self, command: list[str], env: dict[str, str]) -> str:
        """Run ``command`` until the kill; its output. Fails unless it was killed at the event."""
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output, _ = self.proc.communicate(timeout=120)
        expected = -signal.SIGKILL if self.sig == signal.SIGKILL else None
        assert self.killed.is_set() and (expected is None or self.proc.returncode == expected), output
        return output


def _multipart_file(content_type: str, raw: bytes) -> str:
    """The text of the ``file`` part of a multipart/form-data body."""
    message = email.parser.BytesParser().parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    for part in message.walk():
        if part.get_param("name", header="content-disposition") == "file":
            return (part.get_payload(decode=True) or b"").decode("utf-8")
    raise ValueError("no file part")
