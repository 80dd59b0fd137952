"""The Ray executor on a cluster of several nodes: a head node (the driver's) and worker nodes on this machine.

One cluster for the module (:func:`nodes`): a head node without the worker resource and two worker nodes offering
it, each its own raylet on 127.0.0.1, so ``--ray-resources pb_worker=1`` puts the sanitize and judge stages on the
worker nodes while the driver connects to the head. Cache and output directories are in the test's temporary
directory, which every node sees (they share this machine's disk, as nodes of a real cluster share a network
file system). Then worker nodes are lost mid-run (raylet and all its processes killed while batches are out).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest

from fake_openai_server import FakeOpenAIServer, reply_for
from ray_fakes import cli, comparable_results, corpus_inputs, popen, recipe_reply, run_args
from ray_nodes import WORKER_RESOURCE, LocalCluster, local_cluster

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real multi-node Ray cluster on this machine
psutil = pytest.importorskip("psutil")

ON_WORKERS = ("--ray-resources", f"{WORKER_RESOURCE}=1")
CALLS_OUT = 2 * 2  # the node-loss runs: 2 actors of a stage x --concurrency 2


@pytest.fixture(scope="module")
def nodes() -> Iterator[LocalCluster]:
    """A head node and two worker nodes (2 CPUs and 4 worker slots each), stopped (every process) at the end."""
    pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    with local_cluster(worker_nodes=2) as cluster:
        yield cluster


def placement(stderr: str) -> tuple[str, dict[str, set[str]]]:
    """The driver's node and each stage's nodes, from the run's ``ray: driver on node ...`` line (short ids)."""
    line = next(ln for ln in stderr.splitlines() if ln.startswith("ray: driver on node "))
    driver, *stages = line[len("ray: driver on node "):].split("; ")
    found = {}
    for part in stages:
        name, ids = re.fullmatch(r"(\w+) on \d+ nodes? \((.*)\)", part).groups()  # type: ignore[union-attr]
        found[name] = set(ids.split(", "))
    return driver, found


def _short(ids) -> set[str]:
    return {i[:12] for i in ids}


def test_run_and_evaluate_with_stages_on_worker_nodes_write_the_local_results(nodes: LocalCluster, tmp_path: Path):
    on_ray = ("--executor", "ray", "--ray-address", nodes.address, "--ray-batch-size", "3", *ON_WORKERS)
    with FakeOpenAIServer(delay=0.01) as server:
        local = cli(*run_args(server.base_url, tmp_path / "local", tmp_path / "cache-local"))
        assert local.returncode == 0, local.stderr[-2000:]
        distributed = cli(*run_args(server.base_url, tmp_path / "ray", tmp_path / "cache-ray", *on_ray))
        assert distributed.returncode == 0, distributed.stderr[-3000:]
        predictions = tmp_path / "local" / "privasis_sample" / "sanitized.jsonl"

        def evaluate(out: str, *extra: str):
            return cli("evaluate", "-p", str(predictions), "--judge", "openai:fake-judge", "--judge-args",
                       f"base_url={server.base_url}", "-t", "privasis_sample", "--limit", "8", "-o", str(tmp_path / out),
                       "--cache-dir", str(tmp_path / f"cache-{out}"), "--no-progress", "--max-off-label", "100000",
                       "--bootstrap-samples", "200", *extra)

        local_eval, ray_eval = evaluate("eval-local"), evaluate("eval-ray", *on_ray)
    assert local_eval.returncode == ray_eval.returncode == 0, ray_eval.stderr[-3000:]
    for a, b in ((tmp_path / "local", tmp_path / "ray"), (tmp_path / "eval-local", tmp_path / "eval-ray")):
        a, b = a / "privasis_sample", b / "privasis_sample"
        assert (a / "samples.jsonl").read_bytes() == (b / "samples.jsonl").read_bytes()
        assert comparable_results(a) == comparable_results(b)
    assert (tmp_path / "local" / "privasis_sample" / "sanitized.jsonl").read_bytes() == \
        (tmp_path / "ray" / "privasis_sample" / "sanitized.jsonl").read_bytes()
    head, workers = _short([nodes.head.node_id]), _short(n.node_id for n in nodes.workers)
    for done, stages in ((distributed, {"sanitize", "judge"}), (ray_eval, {"judge"})):
        driver, placed = placement(done.stderr)
        assert {driver} == head, "the driver runs on the head node"
        assert set(placed) == stages
        for name, ids in placed.items():
            assert ids and ids <= workers, f"{name} ran on {ids}, not only on worker nodes {workers}"
    assert not list((tmp_path / "cache-ray").rglob("ray-shards/*/*.sqlite")), "every shard is merged"


def test_build_corpus_with_stages_on_worker_nodes_writes_the_local_rows(nodes: LocalCluster, tmp_path: Path):
    inputs = corpus_inputs(tmp_path / "in.jsonl", n=4)
    with FakeOpenAIServer(reply=recipe_reply) as server:
        def build(out: str, *extra: str):
            return cli("build-corpus", "-r", "corpus", "-m", "openai:fake-model", "--model-args", f"base_url={server.base_url}",
                       "--judge", f"openai:fake-judge,base_url={server.base_url}", "-i", str(inputs), "-o", str(tmp_path / out),
                       "--cache-dir", str(tmp_path / f"cache-{out}"), "--batch-size", "2", "--no-progress", *extra)

        local = build("local")
        distributed = build("ray", "--executor", "ray", "--ray-address", nodes.address, *ON_WORKERS)
    assert local.returncode == distributed.returncode == 0, (local.stderr[-1500:], distributed.stderr[-2000:])
    rows = [_content(line) for line in (tmp_path / "local" / "benchmark.jsonl").read_text().splitlines()]
    assert len(rows) >= 2, "the fake recipe model should let most rows through"
    assert [_content(line) for line in (tmp_path / "ray" / "benchmark.jsonl").read_text().splitlines()] == rows


def test_resources_no_node_offers_is_one_line(nodes: LocalCluster, tmp_path: Path):
    result = cli(*run_args("http://127.0.0.1:9/v1", tmp_path / "out", tmp_path / "cache", "--executor", "ray",
                           "--ray-address", nodes.address, "--ray-resources", "gpu_box=1"))
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.returncode == 2 and len(errors) == 1, result.stderr[-2000:]
    assert "gpu_box" in errors[0] and WORKER_RESOURCE in errors[0], errors[0]


def _content(line: str) -> dict:
    """A corpus row without its token usage (spend accounting: batches side by side cannot share cache hits)."""
    row = json.loads(line)
    row.pop("usage", None)
    (row.get("pipeline") or {}).pop("usage", None)
    return row


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
    returns the driver's (returncode, stdout, stderr) and the prompts in flight at the removal."""
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    gate.arm()
    driver = popen(*args)
    try:
        assert server.wait_for(lambda s: sum(s.received.values()) >= gate.first + 2, timeout=180), "the run stalled"
        victim = _node_talking_to(nodes, port)
        assert victim is not None, "no worker node is talking to the server"
        with server.lock:
            in_flight = {p for p, n in server.received.items() if n > server.served[p]}
        nodes.remove_worker(victim)
    finally:
        gate.open()
    out, err = driver.communicate(timeout=600)
    return (driver.returncode, out, err), in_flight


def test_nodes_lost_mid_run_finish_or_stop_in_one_line_and_resume_paying_only_for_the_batches_in_flight(
        nodes: LocalCluster, tmp_path: Path):
    gate = Gate(first=5)
    with FakeOpenAIServer(reply=gate) as server:
        local = cli(*run_args(server.base_url, tmp_path / "local", tmp_path / "cache-local"))
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
        over = {p[:60]: (paid[p], paid_locally[p]) for p in paid if paid[p] > paid_locally[p] + (p in in_flight)}
        assert not over, f"{out}: requests paid more than once beyond those in flight at the loss: {over}"
        # every call the server got, those lost with the node included, is in the spend ledger (once: a call counts
        # from the moment it is sent, so one cut off by the loss before the server read it counts too; there are at
        # most CALLS_OUT of those, the calls the actors can have out at once)
        ledger = _ledger_calls(b)
        for role in ("model", "judge"):
            assert by_role[role] <= ledger[role] <= by_role[role] + CALLS_OUT, (out, ledger, by_role)
