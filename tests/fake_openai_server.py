"""A scriptable local stand-in for an OpenAI chat-completions server, for fault-injection tests.

It listens on 127.0.0.1 (random port) in a background thread of the test process, so a model run in
a subprocess can be killed without killing the server. Replies are a deterministic function of the
prompt. A *script* decides, per request, whether to answer or to inject a fault: HTTP 429 with
Retry-After, HTTP 500, a stall longer than the client's timeout, HTTP 401 (whose message echoes
the presented key, as a careless provider might, so tests can check it never reaches a file), or a 200
answer with scripted content and finish reason (empty, cut at the token budget, echoing the key).

Counters, per prompt: ``received`` (requests that arrived), ``served`` (successful replies written
to a client that was still connected) and ``abandoned`` (the client was gone before the reply).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ANSWER_CUE = "### Sanitized text:"


@dataclass(frozen=True)
class Action:
    """What the server does with one request."""

    kind: str = "ok"  # ok | 429 | 500 | stall | 401
    retry_after: str | None = None  # Retry-After header value for 429
    seconds: float = 0.0  # stall duration
    content: str | None = None  # a 200 answer with this content instead of the usual reply ("{key}": the key sent)
    finish_reason: str = "stop"  # of a 200 answer ("length": cut at the token budget)


OK = Action()
Script = Callable[[str, int], Action]  # (prompt, how many times it was seen before) -> action


def reply_for(prompt: str) -> str:
    """The deterministic raw completion for a prompt (exercises the post-processing rules)."""
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]
    words = len(prompt.split())
    return f"<think>counting {words} words</think>\nassistant\nREWRITTEN {digest} ({words} words)\n{ANSWER_CUE}"


def expected_output(prompt: str) -> str:
    """What :func:`reply_for` becomes after protocol post-processing."""
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]
    return f"REWRITTEN {digest} ({len(prompt.split())} words)"


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many clients connect at once at high concurrency


#: How often the serving loop looks for a stop request: ``shutdown()`` waits up to this long (the library's default,
#: 0.5 s, made every test using a fake server half a second slower when it stopped the server).
STOP_POLL_S = 0.01


class FakeOpenAIServer:
    """Start with ``with FakeOpenAIServer(...) as server:``; ``server.base_url`` ends in ``/v1``."""

    def __init__(self, *, delay: float = 0.0, script: Script | None = None, reply: Callable[[str], str] | None = None,
                 reasoning: Callable[[str], str] | None = None, keep_alive: bool = False,
                 answer: Callable[[dict], str] | None = None, port: int = 0) -> None:
        self.delay = delay
        self.port = port  # 0: any free port
        self.keep_alive = keep_alive  # HTTP/1.1 persistent connections, as real servers keep them
        self.script = script or (lambda prompt, n: OK)
        self.reply = reply or reply_for  # prompt -> message content
        self.reasoning = reasoning  # prompt -> a separate reasoning_content field (as reasoning servers send)
        self.answer = answer  # request body -> message content (sees the seed, temperature...); overrides reply
        self.bodies: list[dict] = []  # every request body received, in order
        self.received: Counter[str] = Counter()
        self.served: Counter[str] = Counter()
        self.abandoned: Counter[str] = Counter()
        self.events: list[tuple[float, str, str]] = []  # (time, prompt, action kind)
        self.lock = threading.Condition()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> "FakeOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if server.keep_alive else "HTTP/1.0"
            disable_nagle_algorithm = True  # headers and body go out as separate writes: never hold one back

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                server._handle(self)

        self._httpd = _Server(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(STOP_POLL_S,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def wait_for(self, predicate: Callable[["FakeOpenAIServer"], bool], timeout: float) -> bool:
        """Block until ``predicate(self)`` holds (checked on every event) or the timeout passes."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(left)
        return True

    # -- request handling
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = json.loads(h.rfile.read(length) or b"{}")
        if not h.path.rstrip("/").endswith("/chat/completions"):
            self._send(h, 404, {"error": {"message": f"no route {h.path}"}})
            return
        prompt = str(body["messages"][-1]["content"])
        with self.lock:
            self.bodies.append(body)
            seen = self.received[prompt]
            self.received[prompt] += 1
            action = self.script(prompt, seen)
            self.events.append((time.monotonic(), prompt, action.kind))
            self.lock.notify_all()
        if action.kind == "401":
            key = _presented_key(h)
            self._send(h, 401, {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error",
                                          "code": "invalid_api_key"}})
            return
        if action.kind == "429":
            headers = {"Retry-After": action.retry_after} if action.retry_after is not None else {}
            self._send(h, 429, {"error": {"message": "Rate limit reached, slow down", "type": "rate_limit"}}, headers)
            return
        if action.kind == "500":
            self._send(h, 500, {"error": {"message": "internal server error", "type": "server_error"}})
            return
        time.sleep(action.seconds if action.kind == "stall" else self.delay)
        if not _client_alive(h.connection):
            with self.lock:
                self.abandoned[prompt] += 1
                self.lock.notify_all()
            return
        if action.content is not None:
            text = action.content.replace("{key}", _presented_key(h))
        else:
            text = self.answer(body) if self.answer is not None else self.reply(prompt)
        message = {"role": "assistant", "content": text}
        if self.reasoning is not None:
            message["reasoning_content"] = self.reasoning(prompt)
        payload = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": action.finish_reason}],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split()),
                      "total_tokens": len(prompt.split()) + len(text.split())},
        }
        if self._send(h, 200, payload):
            with self.lock:
                self.served[prompt] += 1
                self.lock.notify_all()

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict[str, str] | None = None) -> bool:
        data = json.dumps(payload).encode("utf-8")
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
            h.wfile.flush()
            return True
        except OSError:
            return False


def _presented_key(h: BaseHTTPRequestHandler) -> str:
    """The API key the client sent (a careless server may echo it back)."""
    return (h.headers.get("Authorization") or "").removeprefix("Bearer ").strip()


def _client_alive(sock: socket.socket) -> bool:
    """False when the client closed its end (it timed out or was killed) before we replied."""
    try:
        sock.setblocking(False)
        try:
            data = sock.recv(1, socket.MSG_PEEK)
        finally:
            sock.setblocking(True)
    except BlockingIOError:
        return True  # nothing to read and not closed: still waiting for us
    except OSError:
        return False
    return bool(data)


# ---------------------------------------------------------------------------- tiny task on disk
def make_row(i: int) -> dict:
    """A small benchmark row in the Privasis-Zero schema (fictional; braces included on purpose)."""
    name = f"Person{i} Example"
    return {
        "id": f"r{i:03d}",
        "record_type": "Short note",
        "original_record": f"Note {i}: {name} paid {{fee}} of {100 + i} EUR on 2024-03-{i % 28 + 1:02d}.",
        "sanitized_record": "Note: someone paid a fee.",
        "base_instruction": f"- Drop the name '{name}'.\n- Generalize the date.",
        "smoothed_instruction": "Remove the person's name and make the date vague.",
        "attributes_to_drop": {"selected": {"full_name": name}, "group": False},
        "attributes_to_abstract": {"selected": {"payment_date": f"2024-03-{i % 28 + 1:02d}"}, "group": False},
        "attributes_to_keep": {"amount": {"value": f"{100 + i} EUR", "sanitization": "keep", "group_name": None}},
    }


def write_tiny_task(directory: Path, n: int = 6, name: str = "tiny") -> Path:
    """Write ``<name>.yaml`` (including the shipped base config) plus its rows; return the YAML path."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = directory / f"{name}.jsonl"
    rows.write_text("".join(json.dumps(make_row(i)) + "\n" for i in range(n)), encoding="utf-8")
    base = REPO_ROOT / "tasks" / "_privasis_base.yaml"
    yaml_path = directory / f"{name}.yaml"
    yaml_path.write_text(
        f"task: {name}\ninclude: {base}\ndataset:\n  path: null\n  revision: null\n  data_files: {rows.name}\n"
        "generation:\n  max_tokens: 64\njudge:\n  model: identity:x\n",
        encoding="utf-8",
    )
    return yaml_path
