"""Records per second of ``run`` with the local executor and with ``--executor ray``, on the same synthetic input.

A fixed-latency fake chat-completions server (``tests/fake_openai_server.py``) is both the model and the judge;
the tiny synthetic task of the tests (``write_tiny_task``) supplies N records. The Ray cluster (127.0.0.1, 2 CPUs
by default) is started once by this script and the runs connect to it with ``--ray-address``, so cluster start-up
is not counted (connecting, starting the actors and shipping batches is). Every run gets a fresh cache and output
directory, so every request is paid for.

Then ``generate`` (the synthesis recipe, answered by the tests' fake synthesis model, which refuses some drafts)
makes ``--generate`` records with each executor: its drafts run ahead on Ray while one actor finishes the batches.

Usage: ``python benchmarks/ray_executor.py [--records 200] [--latency 0.05] [--concurrency 4] [--workers 2 4]
[--generate 8]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_openai_server import FakeOpenAIServer, write_tiny_task  # noqa: E402
from ray_fakes import synthesis_reply  # noqa: E402


def _cli(*args: str) -> float:
    """Wall seconds of ``privasis-bench ARGS`` run with this checkout; a failure stops the benchmark."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "privasis_bench", *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({done.returncode}): {done.stderr[-1500:]}")
    return time.perf_counter() - started


def _run(task: Path, server: str, out: Path, concurrency: int, *extra: str) -> tuple[float, int]:
    wall = _cli("run", "-m", "openai:bench-model", "--model-args", f"base_url={server}", "--judge", "openai:bench-judge",
                "--judge-args", f"base_url={server}", "-t", str(task), "-o", str(out / "run"), "--cache-dir", str(out / "cache"),
                "--no-progress", "--max-off-label", "1000000", "--concurrency", str(concurrency), "--bootstrap-samples",
                "100", *extra)
    results = json.loads(next((out / "run").glob("*/results.json")).read_text())
    return wall, results["counts"]["judged_records"]


def _generate(server: str, out: Path, n: int, concurrency: int, *extra: str) -> float:
    return _cli("generate", "-r", "synthesis", "-m", "openai:bench-model", "--model-args", f"base_url={server}", "-n", str(n),
                "-o", str(out / "corpus"), "--cache-dir", str(out / "cache"), "--batch-size", "4", "--concurrency",
                str(concurrency), "--no-progress", *extra)


def main() -> None:
    """Print a table of wall time and records/s per executor setting."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the fake server takes per request")
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per process (local) or per actor (ray)")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4], help="Ray actors per stage")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--generate", type=int, default=8, help="records generate makes per executor (0: skip)")
    args = parser.parse_args()

    import ray

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    address = ray.get_runtime_context().gcs_address
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(delay=args.latency) as server:
        task = write_tiny_task(Path(tmp) / "task", n=args.records, name="bench")
        settings = [("local", args.concurrency, ())]
        settings += [("local", args.concurrency * w, ()) for w in args.workers if w > 1]
        settings += [(f"ray x{w}", args.concurrency, ("--executor", "ray", "--ray-address", address, "--ray-workers", str(w),
                                                     "--ray-cpus-per-worker", str(min(0.5, args.cpus / (2 * w)))))
                     for w in args.workers]
        for i, (label, conc, extra) in enumerate(settings):
            before = sum(server.received.values())
            wall, n = _run(task, server.base_url, Path(tmp) / f"out{i}", conc, *extra)
            rows.append((label, conc, sum(server.received.values()) - before, wall, n / wall))
    generated = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(delay=args.latency, reply=synthesis_reply) as server:
        for i, (label, extra) in enumerate((("local", ()), ("ray", ("--executor", "ray", "--ray-address", address)))
                                           if args.generate else ()):
            before = sum(server.received.values())
            wall = _generate(server.base_url, Path(tmp) / f"gen{i}", args.generate, args.concurrency, *extra)
            generated.append((label, sum(server.received.values()) - before, wall, args.generate / wall))
    ray.shutdown()
    print(f"{args.records} records, {args.latency * 1000:.0f} ms per request, Ray cluster: {args.cpus} CPUs on 127.0.0.1")
    print(f"{'executor':<10} {'in flight':>9} {'requests':>9} {'wall s':>8} {'records/s':>10}")
    for label, conc, requests, wall, rate in rows:
        workers = int(label.split("x")[1]) if label.startswith("ray") else 1
        print(f"{label:<10} {conc * workers:>9} {requests:>9} {wall:>8.1f} {rate:>10.1f}")
    if generated:
        print(f"\ngenerate -n {args.generate} (batch size 4, {args.concurrency} requests in flight per engine)")
        print(f"{'executor':<10} {'requests':>9} {'wall s':>8} {'records/s':>10}")
        for label, requests, wall, rate in generated:
            print(f"{label:<10} {requests:>9} {wall:>8.1f} {rate:>10.2f}")


if __name__ == "__main__":
    main()
