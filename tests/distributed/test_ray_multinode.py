"""Worker nodes of the session's multi-node cluster lost mid-run, and stages no node can host.

The cluster (``conftest.py``): a head node without the worker resource and worker nodes offering it, each its own
raylet on 127.0.0.1, so ``--ray-resources pb_worker=1`` puts the sanitize and judge stages on the worker nodes
while the driver runs on the head (that the results then match the local executor's is checked in
``test_ray_identical_results.py``). Here worker nodes are removed while batches are in flight (raylet and every
process of the node killed at once, as a machine lost): the run finishes on the nodes left, or stops in one line
when none can host the stages; re-running resumes to the local results, paying again only for what was in flight.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer, reply_for
from ray_fakes import cli, comparable_results, in_process, popen, run_args
from ray_nodes import WORKER_RESOURCE, LocalCluster

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real multi-node Ray cluster on this machine
psutil = pytest.importorskip("psutil")

ON_WORKERS = ("--ray-resources", f"{WORKER_RESOURCE}=1")
CALLS_OUT = 2 * 2  # the node-loss runs: 2 actors of a stage x --concurrency 2


def test_resources_no_node_offers_is_one_line(ray_address: str, tmp_path: Path):
    result = cli(*run_args("http://127.0.0.1:9/v1", tmp_path / "out", tmp_path / "cache", "--executor", "ray",
                           "--ray-address", ray_address, "--ray-resources", "gpu_box=1"))
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.returncode == 2 and len(errors) == 1, result.stderr[-2000:]
    assert "gpu_box" in errors[0] and WORKER_RESOURCE in errors[0], errors[0]


# -- nodes lost mid-run -------------------------------------------------------------------------------------------

class Gate:
    """A fake-server reply that answers the first ``first`` requests at once and holds every later one until
    :meth:`open` (so the test knows batches are in flight on the workers when it removes a node)."""

    def __init__(self, first: int) -> None:
        self.first, self.answered = first, 0
        self.armed, self.gate, self.lock = threading.Event(), threading.Event(), threading.Lock()

    def __call__(self, prompt: str) -> str:
        if self.armed.is_set():
            with self.lock:
                self.answered += 1
                wait = self.answered > self.first
            if wait:
                self.gate.wait(120)
        return reply_for(prompt)

    def arm(self) -> None:
        self.answered = 0
        self.gate.clear()
        self.armed.set()

    def open(self) -> None:
        self.gate.set()


def _node_talking_to(nodes: LocalCluster, port: int) -> object | None:
    """The live worker node one of whose processes has a connection open to ``port`` (the fake server)."""
    for node in list(nodes.cluster.worker_nodes):
        try:
            raylet = psutil.Process(nodes.raylet_pid(node))
            for proc in raylet.children(recursive=True):
                if any(c.raddr and c.raddr.port == port for c in proc.net_connections(kind="tcp")):
                    return node
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return None


def _paid_by_role(server: FakeOpenAIServer) -> Counter:
    return Counter("judge" if body.get("model") == "fake-judge" else "model" for body in server.bodies)


def _ledger_calls(task_dir: Path) -> Counter:
    """Adapter calls per role over every invocation in the task directory's spend ledger."""
    ledger = json.loads((task_dir / "usage.json").read_text())
    total = Counter()
    for entry in ledger["invocations"]:
        for role, row in entry["usage"].items():
            total[role] += row["batches"]
    return total


def _lose_a_node_mid_run(nodes: LocalCluster, server: FakeOpenAIServer, gate: Gate, args: list[str]) -> tuple[object, set[str]]:
    """Start ``args`` in the background, remove the worker node talking to the server while requests are held;
    returns the driver's (returncode, stdout, stderr) and the prompts in flight at the removal: those the server
    held unanswered then, and those it read only once their client was gone (sent by the node as it died)."""
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    gate.arm()
    driver = popen(*args)
    try:
        assert server.wait_for(lambda s: sum(s.received.values()) >= gate.first + 2, timeout=180), "the run stalled"
        victim = _node_talking_to(nodes, port)
        assert victim is not None, "no worker node is talking to the server"
        nodes.remove_worker(victim)  # returns once every process of the node is gone
        with server.lock:  # the gate holds every reply: what arrived unanswered was in flight at the loss
            in_flight = {p for p, n in server.received.items() if n > server.served[p]}
    finally:
        gate.open()
    out, err = driver.communicate(timeout=600)
    with server.lock:  # a request the dead node sent just before the loss may reach the server only afterwards:
        in_flight |= {p for p, n in server.abandoned.items() if n}  # its client was gone, so it was in flight too
    return (driver.returncode, out, err), in_flight


def test_nodes_lost_mid_run_finish_or_stop_in_one_line_and_resume_paying_only_for_the_batches_in_flight(
        ray_cluster: LocalCluster, tmp_path: Path, monkeypatch, capsys, cores_alone):
    nodes = ray_cluster
    while len(nodes.cluster.worker_nodes) < 2:  # two worker nodes to start with, whatever ran before
        nodes.workers.append(nodes.cluster.add_node(**nodes.worker_args))
    gate = Gate(first=5)
    with FakeOpenAIServer(reply=gate) as server:
        local = in_process(monkeypatch, capsys, *run_args(server.base_url, tmp_path / "local", tmp_path / "cache-local"))
        assert local.returncode == 0, local.stderr[-2000:]
        paid_locally = Counter(server.received)

        def ray_run(out: str) -> list[str]:
            return run_args(server.base_url, tmp_path / out, tmp_path / f"cache-{out}", "--executor", "ray", "--ray-address",
                            nodes.address, "--ray-batch-size", "2", "--ray-workers", "2", "--concurrency", "2",
                            "--ray-node-wait", "5", *ON_WORKERS)

        reports = []
        for out in ("one-lost", "all-lost"):  # the first loses one worker node of two, the second the last one
            server.received.clear()
            server.served.clear()
            server.abandoned.clear()
            server.bodies.clear()
            args = ray_run(out)
            (code, _, err), in_flight = _lose_a_node_mid_run(nodes, server, gate, args)
            assert in_flight, "the node was removed with requests in flight"
            if out == "all-lost":
                nodes.workers.append(nodes.cluster.add_node(**nodes.worker_args))  # a node joins again
            rerun = cli(*args)
            assert rerun.returncode == 0, (err[-2000:], rerun.stderr[-3000:])
            reports.append((out, code, err, in_flight, Counter(server.received), _paid_by_role(server)))

    a = tmp_path / "local" / "privasis_sample"
    for out, code, err, in_flight, paid, by_role in reports:
        errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
        if out == "one-lost":  # the worker node left hosts the stages: the run finishes there
            assert code == 0 and not errors, err[-3000:]
            assert any(ln.startswith("ray: node ") and " lost;" in ln for ln in err.splitlines()), err[-3000:]
        else:  # no node left offers the stages' resource: one clear line, exit 1
            assert code == 1 and len(errors) == 1, err[-3000:]
            assert "no live node can host the stages" in errors[0] and "re-run" in errors[0], errors[0]
        b = tmp_path / out / "privasis_sample"
        assert (a / "samples.jsonl").read_bytes() == (b / "samples.jsonl").read_bytes(), out
        assert comparable_results(a) == comparable_results(b), out
        # Paid again on the re-run: what was in flight at the loss (held by the server, or read after its client died),
        # plus at most the calls the actors can have out at once answered in the instant of the loss (the answer
        # reached a process that died before storing it), each at most once more: never whole batches or the run.
        over = {p[:60]: (paid[p], paid_locally[p]) for p in paid if paid[p] > paid_locally[p] + (p in in_flight)}
        assert len(over) <= CALLS_OUT and all(n <= local + 1 for n, local in over.values()), (
            f"{out}: requests paid more than once beyond those in flight at the loss: {over}")
        # every call the server got, those lost with the node included, is in the spend ledger (once: a call counts
        # from the moment it is sent, so one cut off by the loss before the server read it counts too; there are at
        # most CALLS_OUT of those, the calls the actors can have out at once)
        ledger = _ledger_calls(b)
        for role in ("model", "judge"):
            assert by_role[role] <= ledger[role] <= by_role[role] + CALLS_OUT, (out, ledger, by_role)
