"""Watching the cluster's nodes while stages run: a lost node is told in one line, and a run no node can host stops.

Ray restarts the actors of a lost node on the nodes left and runs their batches again, so losing a node costs
only the batches it had in flight. But when no live node offers what an actor asks for (``--ray-resources``,
``--ray-cpus-per-worker``), Ray waits for one to join, for ever. :class:`NodeWatch` looks at the node table
every second while the stages run; after ``--ray-node-wait`` seconds without a node that can host the stages it
sets its :attr:`NodeWatch.stopped` event. The driver never blocks on Ray itself: :func:`pump` reads the results in
a helper thread and the driver waits on them in short steps, so it sees the event and raises
:class:`NodesLostError` (one line naming the lost nodes and the fix) through its own control flow. No signal, no
ending of the process: the watch works the same in a terminal, in the background (SIGINT ignored), under pytest.
Every finished batch is already on disk, so re-running the same command resumes. A node table that cannot be read
for a moment is read again at the next poll.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import Any, Generator, Iterator

from privasis_bench.errors import PrivasisError

POLL_S = 1.0


class NodesLostError(PrivasisError):
    """No live node of the cluster can host the stages any more (nodes lost and none came back in time)."""

    exit_code = 1


def _fits(node: dict[str, Any], resources: dict[str, float], cpus: float) -> bool:
    have = node.get("Resources") or {}
    return have.get("CPU", 0.0) >= cpus and all(have.get(k, 0.0) >= v for k, v in resources.items())


class NodeWatch:
    """A daemon thread over ``ray.nodes()``: tells lost nodes on stderr and flags a run no live node can host.

    It never touches the driver: once no node could host the stages for ``wait_s`` seconds, :attr:`reason` is set
    and :attr:`stopped` is set; the driver checks them (see :func:`pump` and :meth:`check`).
    """

    def __init__(self, ray: Any, resources: dict[str, float], cpus: float, wait_s: float) -> None:
        self.ray, self.resources, self.cpus, self.wait_s = ray, resources, cpus, wait_s
        self.reason: str | None = None
        self.stopped = threading.Event()
        self._stop = threading.Event()
        self._alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
        self._thread = threading.Thread(target=self._loop, name="privasis-node-watch", daemon=True)

    def __enter__(self) -> "NodeWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def check(self) -> None:
        """Raise :class:`NodesLostError` when the watch found that no live node can host the stages."""
        if self.stopped.is_set():
            raise NodesLostError(self.reason or "ray executor: no live node can host the stages")

    def _loop(self) -> None:
        unhosted_since: float | None = None
        lost: list[str] = []
        while not self._stop.wait(POLL_S):
            try:
                nodes = self.ray.nodes()
            except Exception:  # noqa: BLE001 - the node table did not answer this time: keep the last view
                continue
            alive = {n["NodeID"] for n in nodes if n.get("Alive")}
            for gone in sorted(self._alive - alive):
                lost.append(gone[:12])
                print(f"ray: node {gone[:12]} lost; any batches it had in flight run again on the nodes left",
                      file=sys.stderr, flush=True)
            self._alive = alive
            if any(_fits(n, self.resources, self.cpus) for n in nodes if n.get("Alive")):
                unhosted_since = None
                continue
            now = time.monotonic()
            if unhosted_since is None:
                unhosted_since = now
            if now - unhosted_since >= self.wait_s:
                self.reason = self._message(lost)
                self.stopped.set()
                return

    def _message(self, lost: list[str]) -> str:
        wanted = ", ".join([f"{self.cpus:g} CPU", *(f"{v:g} {k}" for k, v in self.resources.items())])
        return (f"ray executor: no live node can host the stages ({wanted} per actor) for {self.wait_s:g} s"
                f" after losing node{'s' if len(lost) != 1 else ''} {', '.join(lost) or '(none seen)'}; "
                "finished batches are saved: add nodes (or wait for them) and re-run the same command to resume")


_DONE = object()


class _Raised:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def pump(items: Iterator[Any], watch: NodeWatch | None, step_s: float = 0.2) -> Generator[Any, None, None]:
    """Yield what ``items`` yields, read in a helper thread so that the caller never blocks on it for long.

    Between two items the caller waits in steps of ``step_s`` and raises :class:`NodesLostError` as soon as
    ``watch`` stopped the run; an exception raised by ``items`` is re-raised here as itself. At most one item is
    read ahead. When the caller stops early, the helper thread stops at its next item (it is a daemon thread, so a
    read that never returns does not keep the process alive).
    """
    box: queue.Queue[Any] = queue.Queue(maxsize=1)
    closed = threading.Event()

    def hand(item: Any) -> bool:
        while not closed.is_set():
            try:
                box.put(item, timeout=step_s)
                return True
            except queue.Full:
                continue
        return False

    def reader() -> None:
        try:
            for item in items:
                if not hand(item):
                    break
            else:
                hand(_DONE)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            hand(_Raised(exc))
        finally:
            if closed.is_set() and hasattr(items, "close"):
                items.close()

    thread = threading.Thread(target=reader, name="privasis-ray-results", daemon=True)
    thread.start()
    try:
        while True:
            try:
                item = box.get(timeout=step_s)
            except queue.Empty:
                if watch is not None:
                    watch.check()
                continue
            if item is _DONE:
                return
            if isinstance(item, _Raised):
                raise item.exc
            yield item
    finally:
        closed.set()
