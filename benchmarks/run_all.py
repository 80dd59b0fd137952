"""Run every benchmark with its default settings, one after another, and print how long each took.

Usage: ``python benchmarks/run_all.py [--skip NAME ...]``. The whole set is meant to finish in under ten minutes
on a 2-core machine. A measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (name, arguments): the scripts and the settings whose figures benchmarks/README.md reports.
SCRIPTS: list[tuple[str, list[str]]] = [
    ("throughput", []),
    ("throughput", ["--two-servers", "--latency", "0.05", "--judge-latency", "0.1", "--concurrency", "16"]),
    ("throughput_llamacpp", []),
    ("scale", []),
    ("judge_calls", []),
    ("engine_overhead", []),
    ("hub_failfast", []),
    ("cli_startup", []),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip", nargs="*", default=[], help="script names to leave out")
    args = parser.parse_args()
    total_start = time.perf_counter()
    timings: list[tuple[str, float, int]] = []
    for name, argv in SCRIPTS:
        if name in args.skip:
            continue
        label = " ".join([f"{name}.py", *argv])
        print(f"\n=== {label}", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(HERE / f"{name}.py"), *argv])
        timings.append((label, time.perf_counter() - start, code))
    print("\n=== timings")
    for label, seconds, code in timings:
        print(f"{seconds:8.1f} s  {label}" + ("" if code == 0 else f"  (exit {code})"))
    print(f"{time.perf_counter() - total_start:8.1f} s  all")
    if any(code for _, _, code in timings):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
