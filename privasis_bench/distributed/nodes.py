"""Watching the cluster's nodes while stages run: a lost node is told in one line, and a run no node can host stops.

Ray restarts the actors of a lost node on the nodes left and runs their batches again, so losing a node costs
only the batches it had in flight. But when no live node offers what an actor asks for (``--ray-resources``,
``--ray-cpus-per-worker``), Ray waits for one to join, for ever. :class:`NodeWatch` looks at the node table
every second while the stages run; after ``--ray-node-wait`` seconds without a node that can host the stages it
stops the run (by interrupting the driver's main thread) with one line naming the lost nodes and the fix. Every
finished batch is already on disk, so re-running the same command resumes.

The interruption reaches the main thread only when it runs Python code; a driver that is still blocked
:data:`GRACE_S` seconds later (inside a call that does not return, or one that swallowed the interruption) is ended
with the same line and exit code, so a run that no node can host never hangs. A node table that cannot be read
for a moment is read again at the next poll.
"""

from __future__ import annotations

import _thread
import os
import sys
import threading
import time
from typing import Any

from privasis_bench.errors import PrivasisError

POLL_S = 1.0
#: After the watch interrupts the driver (or finds it never waiting on Ray): seconds before the process is ended.
GRACE_S = 20.0


class NodesLostError(PrivasisError):
    """No live node of the cluster can host the stages any more (nodes lost and none came back in time)."""

    exit_code = 1


def _fits(node: dict[str, Any], resources: dict[str, float], cpus: float) -> bool:
    have = node.get("Resources") or {}
    return have.get("CPU", 0.0) >= cpus and all(have.get(k, 0.0) >= v for k, v in resources.items())


class NodeWatch:
    """A daemon thread over ``ray.nodes()``: tells lost nodes on stderr and stops a run no live node can host."""

    def __init__(self, ray: Any, resources: dict[str, float], cpus: float, wait_s: float) -> None:
        self.ray, self.resources, self.cpus, self.wait_s = ray, resources, cpus, wait_s
        self.reason: str | None = None
        self.waiting = False  # the driver's main thread waits on Ray for the next batch (only then is it stopped)
        self._stop = threading.Event()
        self._alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
        self._thread = threading.Thread(target=self._loop, name="privasis-node-watch", daemon=True)

    def __enter__(self) -> "NodeWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        unhosted_since: float | None = None
        interrupted_at: float | None = None
        lost: list[str] = []
        while not self._stop.wait(POLL_S):
            try:
                nodes = self.ray.nodes()
            except Exception:  # noqa: BLE001 - the node table did not answer this time: keep the last view
                nodes = None
            if nodes is not None:
                alive = {n["NodeID"] for n in nodes if n.get("Alive")}
                for gone in sorted(self._alive - alive):
                    lost.append(gone[:12])
                    print(f"ray: node {gone[:12]} lost; any batches it had in flight run again on the nodes left",
                          file=sys.stderr, flush=True)
                self._alive = alive
                if interrupted_at is None and any(_fits(n, self.resources, self.cpus) for n in nodes if n.get("Alive")):
                    unhosted_since = None
                    continue
            if unhosted_since is None:
                unhosted_since = time.monotonic() if nodes is not None else None
                continue
            now = time.monotonic()
            if now - unhosted_since < self.wait_s:
                continue
            if self.reason is None:
                self.reason = self._message(lost)
            if interrupted_at is None and self.waiting:
                interrupted_at = now
                _thread.interrupt_main()  # the main thread raises NodesLostError (see stop_reason)
            elif now - (interrupted_at if interrupted_at is not None else unhosted_since + self.wait_s) >= GRACE_S:
                self._end_process()

    def _message(self, lost: list[str]) -> str:
        wanted = ", ".join([f"{self.cpus:g} CPU", *(f"{v:g} {k}" for k, v in self.resources.items())])
        return (f"ray executor: no live node can host the stages ({wanted} per actor) for {self.wait_s:g} s"
                f" after losing node{'s' if len(lost) != 1 else ''} {', '.join(lost) or '(none seen)'}; "
                "finished batches are saved: add nodes (or wait for them) and re-run the same command to resume")

    def _end_process(self) -> None:
        """The driver did not stop when interrupted: say why in the usual one line and end the process."""
        if self._stop.is_set():  # it did stop meanwhile
            return
        print(f"error: {self.reason}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(NodesLostError.exit_code)


def stop_reason(watch: NodeWatch | None, exc: BaseException) -> BaseException:
    """The :class:`NodesLostError` to raise for ``exc`` (a KeyboardInterrupt) when the watch stopped the run, else ``exc``."""
    if watch is not None and watch.reason is not None and isinstance(exc, KeyboardInterrupt):
        return NodesLostError(watch.reason)
    return exc
