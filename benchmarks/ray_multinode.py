"""Records per second of ``run --executor ray`` with 1, 2 and 4 worker actors per stage spread over worker nodes.

A multi-node Ray cluster is started on this machine (``tests/ray_nodes.py``: a head node for the driver and
``--nodes`` worker nodes, each its own raylet on 127.0.0.1 offering the ``pb_worker`` resource), and the stages
are put on the worker nodes with ``--ray-resources pb_worker=1``. A fixed-latency fake chat-completions server
(``tests/fake_openai_server.py``) is both the model and the judge; the tiny synthetic task of the tests supplies
``--records`` records. Every run gets a fresh cache and output directory, so every request is paid for, and the
cluster's start-up is not counted (connecting, starting the actors and shipping batches are).

Printed per setting: wall seconds, records/s, the ratio to the one-actor run, and the driver's CPU seconds as a
share of the wall time. With model calls that take ``--latency`` seconds, records/s grows with the actors until
the driver (which builds every request, writes every batch and finishes with the local pass) or this machine's
cores are the limit: a driver CPU share near 100% says the driver is the bottleneck.

Usage: ``python benchmarks/ray_multinode.py [--records 24] [--latency 0.05] [--concurrency 2] [--actors 1 2 4]
[--nodes 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_openai_server import FakeOpenAIServer, write_tiny_task  # noqa: E402
from ray_nodes import LOOPBACK_ENV, WORKER_RESOURCE, local_cluster  # noqa: E402


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(task: Path, server: str, out: Path, concurrency: int, *extra: str) -> tuple[float, float, int]:
    """Wall seconds, the driver's CPU seconds and the records judged of one ``run``; a failure stops the benchmark."""
    env = {**os.environ, **LOOPBACK_ENV, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    args = ["run", "-m", "openai:bench-model", "--model-args", f"base_url={server}", "--judge", "openai:bench-judge",
            "--judge-args", f"base_url={server}", "-t", str(task), "-o", str(out / "run"), "--cache-dir", str(out / "cache"),
            "--no-progress", "--max-off-label", "1000000", "--concurrency", str(concurrency), "--bootstrap-samples", "100",
            *extra]
    cpu, started = _children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "privasis_bench", *args], capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"run failed ({done.returncode}): {done.stderr[-1500:]}")
    results = json.loads(next((out / "run").glob("*/results.json")).read_text())
    return wall, cpu, results["counts"]["judged_records"]


def main() -> None:
    """Print a table of wall time, records/s, the ratio to one actor and the driver's CPU share per setting."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=24)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the fake server takes per request")
    parser.add_argument("--concurrency", type=int, default=2, help="requests in flight per actor")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4], help="worker actors per stage")
    parser.add_argument("--nodes", type=int, default=2, help="worker nodes (the head node runs the driver only)")
    parser.add_argument("--batch-size", type=int, default=8, help="records per Ray batch")
    args = parser.parse_args()

    most = max(args.actors)
    slots = -(-2 * most // args.nodes)  # both stages' actors fit on the worker nodes
    rows = []
    with local_cluster(worker_nodes=args.nodes, worker_cpus=2, slots=slots) as cluster, \
            tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(delay=args.latency) as server:
        task = write_tiny_task(Path(tmp) / "task", n=args.records, name="bench")
        wall, cpu, n = _run(task, server.base_url, Path(tmp) / "local", args.concurrency)
        rows.append(("local", args.concurrency, wall, cpu, n / wall))
        cpus = min(0.5, 2 * args.nodes / (2 * most * 2))
        for actors in args.actors:
            extra = ("--executor", "ray", "--ray-address", cluster.address, "--ray-workers", str(actors),
                     "--ray-batch-size", str(args.batch_size), "--ray-cpus-per-worker", f"{cpus:g}",
                     "--ray-resources", f"{WORKER_RESOURCE}=1")
            wall, cpu, n = _run(task, server.base_url, Path(tmp) / f"ray{actors}", args.concurrency, *extra)
            rows.append((f"ray x{actors}", args.concurrency * actors, wall, cpu, n / wall))
    print(f"{args.records} records, {args.latency * 1000:.0f} ms per request (model and judge), "
          f"{args.concurrency} in flight per actor, {args.nodes} worker nodes + head on 127.0.0.1, {os.cpu_count()} cores")
    one = next((r[4] for r in rows if r[0] == f"ray x{min(args.actors)}"), rows[0][4])
    print(f"{'executor':<10} {'in flight':>9} {'wall s':>8} {'records/s':>10} {'vs 1 actor':>10} {'driver CPU':>11}")
    for label, in_flight, wall, cpu, rate in rows:
        print(f"{label:<10} {in_flight:>9} {wall:>8.1f} {rate:>10.2f} {rate / one:>9.2f}x {100 * cpu / wall:>10.0f}%")


if __name__ == "__main__":
    main()
