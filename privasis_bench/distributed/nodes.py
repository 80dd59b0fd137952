"""Watching the cluster's nodes while stages run: a lost node is told in one line, and a run no node can host stops.

Ray restarts the actors of a lost node on the nodes left and runs their batches again, so losing a node costs
only the batches it had in flight. But when no live node offers what an actor asks for (``--ray-resources``,
``--ray-cpus-per-worker``), Ray waits for one to join, for ever. :class:`NodeWatch` looks at the node table
every second while the stages run; after ``--ray-node-wait`` seconds without a node that can host the stages it
stops the run (by interrupting the driver's main thread) with one line naming the lost nodes and the fix. Every
finished batch is already on disk, so re-running the same command resumes.
"""

from __future__ import annotations

import _thread
import sys
import threading
import time
from typing import Any

from privasis_bench.errors import PrivasisError

POLL_S = 1.0


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
        lost: list[str] = []
        while not self._stop.wait(POLL_S):
            try:
                nodes = self.ray.nodes()
            except Exception:  # noqa: BLE001 - the GCS itself is gone: Ray's own error reaches the driver
                return
            alive = {n["NodeID"] for n in nodes if n.get("Alive")}
            for gone in sorted(self._alive - alive):
                lost.append(gone[:12])
                print(f"ray: node {gone[:12]} lost; any batches it had in flight run again on the nodes left",
                      file=sys.stderr, flush=True)
            self._alive = alive
            if any(_fits(n, self.resources, self.cpus) for n in nodes if n.get("Alive")):
                unhosted_since = None
                continue
            unhosted_since = unhosted_since if unhosted_since is not None else time.monotonic()
            if time.monotonic() - unhosted_since >= self.wait_s and self.waiting:
                wanted = ", ".join([f"{self.cpus:g} CPU", *(f"{v:g} {k}" for k, v in self.resources.items())])
                self.reason = (f"ray executor: no live node can host the stages ({wanted} per actor) for {self.wait_s:g} s"
                               f" after losing node{'s' if len(lost) != 1 else ''} {', '.join(lost) or '(none seen)'}; "
                               "finished batches are saved: add nodes (or wait for them) and re-run the same command "
                               "to resume")
                _thread.interrupt_main()
                return


def stop_reason(watch: NodeWatch | None, exc: BaseException) -> BaseException:
    """The :class:`NodesLostError` to raise for ``exc`` (a KeyboardInterrupt) when the watch stopped the run, else ``exc``."""
    if watch is not None and watch.reason is not None and isinstance(exc, KeyboardInterrupt):
        return NodesLostError(watch.reason)
    return exc
