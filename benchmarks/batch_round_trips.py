"""Provider batches: round trips, wall time at a fixed per-batch latency, and the share of requests sent batched.

Runs ``privasis-bench run --batch model,judge`` (in its own process) against the local OpenAI-compatible fake with
Files + Batches (``tests/fake_batch_server.py``), whose batches take ``--latency`` seconds each however large they
are, for the shipped sample task and for ``--records`` synthetic records. Prints, per case: the batches submitted,
the HTTP round trips the batch endpoints saw (uploads, creates, status polls, downloads), the wall time, the
requests made and the share of them sent in batches (from results.json). A measuring tool, not a test.

Usage: ``python benchmarks/batch_round_trips.py [--records 1000] [--latency 2.0] [--poll 0.5]``.
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fake_batch_server import FakeBatchServer  # noqa: E402
from fake_openai_server import write_tiny_task  # noqa: E402


def one_case(name: str, task: str, work: Path, latency: float, poll: float, quiet: float) -> dict:
    """Run one task batched against a fresh fake provider; the figures."""
    with FakeBatchServer(latency=latency) as server:
        out = work / f"out-{name}"
        command = [sys.executable, "-m", "privasis_bench", "run", "--model", "openai:fake-model", "--model-args",
                   f"base_url={server.base_url}", "--tasks", task, "--judge", "openai:fake-judge", "--judge-args",
                   f"base_url={server.base_url}", "--output", str(out), "--cache-dir", str(work / f"cache-{name}"),
                   "--no-progress", "--bootstrap-samples", "20", "--max-off-label", "1000000", "--batch", "model,judge",
                   "--batch-poll", str(poll), "--batch-quiet", str(quiet), "--batch-size", "50000"]
        started = time.perf_counter()
        done = subprocess.run(command, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise SystemExit(f"{name}: run failed ({done.returncode}): {done.stderr[-2000:]}")
        results = next(out.rglob("results.json"))
        usage = json.loads(results.read_text())["usage"]
        requests = sum(row["requests"] for row in usage.values())
        batched = sum(row.get("batched_requests", 0) for row in usage.values())
        trips = sum(n for k, n in server.http_calls.items() if k.split()[1] in ("/files", "/batches"))
        return {"case": name, "batches": len(server.batches), "round_trips": trips, "wall_s": wall,
                "requests": requests, "batched_share": batched / requests if requests else 0.0,
                "live_calls": server.live_calls}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=2.0, help="seconds every batch takes at the fake provider")
    parser.add_argument("--poll", type=float, default=0.5, help="--batch-poll")
    parser.add_argument("--quiet", type=float, default=0.5, help="--batch-quiet")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        synthetic = write_tiny_task(work / "task", n=args.records, name="synthetic")
        rows = [one_case("privasis_sample", "privasis_sample", work, args.latency, args.poll, args.quiet),
                one_case(f"{args.records} synthetic", str(synthetic), work, args.latency, args.poll, args.quiet)]
    print(f"per-batch latency {args.latency:g}s, poll every {args.poll:g}s, partial batch after {args.quiet:g}s quiet")
    print(f"{'case':<22} {'batches':>7} {'round trips':>11} {'wall s':>7} {'requests':>8} {'batched':>8} {'live':>5}")
    for r in rows:
        print(f"{r['case']:<22} {r['batches']:>7} {r['round_trips']:>11} {r['wall_s']:>7.1f} {r['requests']:>8} "
              f"{100 * r['batched_share']:>7.0f}% {r['live_calls']:>5}")


if __name__ == "__main__":
    main()
