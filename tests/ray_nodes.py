"""A multi-node Ray cluster on this machine: a head node and worker nodes, each its own raylet with its own ports.

Built with Ray's own test cluster (``ray.cluster_utils.Cluster``), the way Ray tests node failures: every node is a
separate raylet (and object store) on 127.0.0.1, the head also runs the GCS. Worker nodes offer the custom resource
:data:`WORKER_RESOURCE`, so ``--ray-resources pb_worker=1`` puts the stages on them, while a driver started on this
machine connects to the head node. Every process a node starts is killed when the cluster is shut down, and anything
still alive afterwards that the nodes started is killed by its pid (:meth:`LocalCluster.shutdown`).
"""

from __future__ import annotations

import os
import re
import socket
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent

#: Ray turns a loopback cluster address into this machine's network address before connecting (and would then
#: not find nodes listening on 127.0.0.1 only); with this in its environment, a driver keeps to 127.0.0.1 (the
#: tests' CLI drivers get it from ``ray_fakes.cli``).
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
#: The custom resource the worker nodes offer (and the stages reserve).
WORKER_RESOURCE = "pb_worker"
OBJECT_STORE_BYTES = 80 * 1024 * 1024  # Ray's minimum is 75 MiB; the batches here are a few KB
#: The head's health checks of the other nodes: a lost node is declared dead after about 5 s instead of Ray's default
#: 15 s or more (5 missed checks 3 s apart). The node-loss tests wait for that twice; what they check is unchanged.
HEALTH_CHECKS = {"health_check_initial_delay_ms": 1000, "health_check_period_ms": 1000,
                 "health_check_timeout_ms": 2000, "health_check_failure_threshold": 5}


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _node_args(num_cpus: float, resources: dict[str, float] | None = None) -> dict[str, Any]:
    # the nodes' workers import privasis_bench from this checkout, as the CLI drivers do (every node of a real
    # cluster needs the package installed: docs/scaling.md)
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    args: dict[str, Any] = {"node_ip_address": "127.0.0.1", "num_cpus": num_cpus, "object_store_memory": OBJECT_STORE_BYTES,
                            "dashboard_agent_listen_port": None,  # None: a free port (the default one is fixed)
                            "env_vars": {"PYTHONPATH": path}}
    if resources:
        args["resources"] = resources
    return args


@dataclass
class LocalCluster:
    """A running cluster: ``address`` for ``--ray-address``; the head and worker :class:`ray._private.node.Node`."""

    cluster: Any
    head: Any
    workers: list[Any]
    worker_args: dict[str, Any]  # what each worker node was started with (to add another one)
    started: set[int] = field(default_factory=set)  # pids of every process the nodes started (see _track)

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def node_ids(self) -> dict[str, str]:
        """Node id -> ``head`` or ``worker<i>`` for the nodes started (removed ones included)."""
        ids = {self.head.node_id: "head"}
        ids.update((node.node_id, f"worker{i}") for i, node in enumerate(self.workers))
        return ids

    def raylet_pid(self, node: Any) -> int:
        """The pid of ``node``'s raylet process."""
        return int(node.all_processes["raylet"][0].process.pid)

    def remove_worker(self, node: Any) -> None:
        """Kill ``node`` at once (raylet and all its processes, no graceful shutdown), as a machine lost."""
        self._track()
        self.cluster.remove_node(node, allow_graceful=False)

    def _track(self) -> None:
        """Remember every process descending from the nodes' processes now (workers, actors), to kill any left over."""
        psutil = _psutil()
        for node in [self.head, *self.cluster.worker_nodes]:
            for infos in node.all_processes.values():
                for info in infos:
                    try:
                        proc = psutil.Process(info.process.pid)
                        self.started.update([proc.pid, *(c.pid for c in proc.children(recursive=True))])
                    except psutil.NoSuchProcess:
                        continue

    def shutdown(self) -> None:
        """Stop every node, then kill (by pid) whatever process they started that is still alive."""
        psutil = _psutil()
        self._track()
        try:
            self.cluster.shutdown()
        finally:
            left = []
            for pid in self.started:
                try:
                    proc = psutil.Process(pid)
                    proc.kill()
                    left.append(proc)
                except psutil.NoSuchProcess:
                    continue
            psutil.wait_procs(left, timeout=30)


def placement(stderr: str) -> tuple[str, dict[str, set[str]]]:
    """The driver's node and each stage's nodes (short ids), from a run's ``ray: driver on node ...`` line."""
    line = next(ln for ln in stderr.splitlines() if ln.startswith("ray: driver on node "))
    driver, *stages = line[len("ray: driver on node "):].split("; ")
    found = {}
    for part in stages:
        name, ids = re.fullmatch(r"(\w+) on \d+ nodes? \((.*)\)", part).groups()  # type: ignore[union-attr]
        found[name] = set(ids.split(", "))
    return driver, found


def check_placement(cluster: LocalCluster, stderr: str, stages: set[str]) -> None:
    """Assert that the driver ran on the head node and each of ``stages`` only on worker nodes."""
    short = lambda ids: {i[:12] for i in ids}  # noqa: E731
    driver, placed = placement(stderr)
    assert driver == cluster.head.node_id[:12], "the driver runs on the head node"
    assert set(placed) == stages, placed
    workers = short(n.node_id for n in cluster.workers)
    for name, ids in placed.items():
        assert ids and ids <= workers, f"{name} ran on {ids}, not only on worker nodes {workers}"


def _psutil() -> Any:
    import psutil

    return psutil


@contextmanager
def local_cluster(worker_nodes: int = 2, *, worker_cpus: float = 2, slots: float = 4, head_cpus: float = 1) -> Iterator[LocalCluster]:
    """A head node (``head_cpus`` CPUs, no custom resource) and ``worker_nodes`` nodes offering ``slots`` of
    :data:`WORKER_RESOURCE` each, all on 127.0.0.1 with their own ports; shut down however the block ends."""
    with _cluster(worker_nodes, worker_cpus=worker_cpus, slots=slots, head_cpus=head_cpus) as running:
        yield running


@contextmanager
def _cluster(worker_nodes: int, *, worker_cpus: float, slots: float, head_cpus: float) -> Iterator[LocalCluster]:
    from ray.cluster_utils import Cluster

    head_args = {**_node_args(head_cpus), "gcs_server_port": free_port(), "include_dashboard": False,
                 "_system_config": HEALTH_CHECKS}
    cluster = Cluster(initialize_head=True, head_node_args=head_args, shutdown_at_exit=True)
    running = LocalCluster(cluster, cluster.head_node, [], _node_args(worker_cpus, {WORKER_RESOURCE: slots}))
    try:
        for _ in range(worker_nodes):
            running.workers.append(cluster.add_node(**running.worker_args))
        cluster.wait_for_nodes()
        yield running
    finally:
        running.shutdown()
