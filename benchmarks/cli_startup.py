"""CLI start-up: wall time and peak memory of `--version`, `--help` and a one-record `run` (issue 25 targets).

Usage: ``python benchmarks/cli_startup.py [--repeat N]``. Each command runs N times in a fresh interpreter; the
best and median wall times and the largest peak RSS are printed next to the target (judged on the best run: the
machine may be shared). A measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: (label, arguments after `python -m privasis_bench`, target seconds)
CASES = [
    ("--version", ["--version"], 0.25),
    ("--help", ["--help"], 0.25),
    ("run -m identity --judge none --limit 1", ["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none",
                                                "--limit", "1", "--no-progress", "--bootstrap-samples", "1000"], 0.5),
]


def measure(args: list[str], repeat: int, workdir: Path) -> tuple[float, float, float]:
    """Best and median wall seconds and peak RSS (MB) of ``repeat`` fresh runs."""
    times, peaks = [], []
    for i in range(repeat):
        extra = ["-o", str(workdir / f"r{i}")] if args[0] == "run" else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "privasis_bench", *args, *extra], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        peaks.append(max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024)
    return min(times), statistics.median(times), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    subprocess.run([sys.executable, "-m", "privasis_bench", "--version"], check=True, stdout=subprocess.DEVNULL)  # warm
    with tempfile.TemporaryDirectory() as tmp:
        print(f"load average {os.getloadavg()[0]:.1f} (targets are for a quiet machine: best of --repeat runs)")
        print(f"{'command':44} {'best s':>8} {'median s':>9} {'target s':>9} {'peak RSS MB':>12}")
        for label, args, target in CASES:
            best, median, peak = measure(args, opts.repeat, Path(tmp))
            print(f"{label:44} {best:8.3f} {median:9.3f} {target:9.2f} {peak:12.0f}  {'ok' if best <= target else 'OVER'}")


if __name__ == "__main__":
    main()
