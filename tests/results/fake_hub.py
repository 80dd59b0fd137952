"""A local stand-in for the two Hub HTTP endpoints a commit uses (preupload, commit), for ``export --push`` tests."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeHub:
    """Records every commit it receives: ``commits`` holds (repo, create_pr, {path: bytes}, auth header present)."""

    def __init__(self) -> None:
        self.commits: list[dict[str, Any]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _reply(self, body: dict[str, Any], status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                parts = path.strip("/").split("/")  # api, models, owner, name, preupload|commit, revision
                if len(parts) >= 6 and parts[4] == "preupload":
                    files = json.loads(raw)["files"]
                    return self._reply({"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                                  for f in files], "commitOid": "0" * 40})
                if len(parts) >= 6 and parts[4] == "commit":
                    lines = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
                    files = {x["value"]["path"]: base64.b64decode(x["value"]["content"]) for x in lines if x["key"] == "file"}
                    hub.commits.append({"repo": f"{parts[2]}/{parts[3]}", "create_pr": "create_pr=1" in self.path,
                                        "files": files, "authorized": bool(self.headers.get("authorization"))})
                    return self._reply({"commitUrl": f"{hub.url}/{parts[2]}/{parts[3]}/commit/{'1' * 40}",
                                        "commitOid": "1" * 40,
                                        "pullRequestUrl": f"{hub.url}/{parts[2]}/{parts[3]}/discussions/1"})
                return self._reply({"error": f"not faked: {path}"}, 404)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> "FakeHub":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
