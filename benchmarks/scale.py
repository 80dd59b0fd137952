"""How the deterministic path scales: seconds, records/s and peak memory of `run` and `rescore`.

For each size (default 1K, 10K and 100K records) a synthetic task in the Privasis-Zero schema is written to a
temporary directory, then `run -m identity --judge none` and `rescore` are each run in a fresh child process
that reports its own peak resident set size. Nothing is called over the network.

Usage: ``python benchmarks/scale.py [--sizes 1000 10000 100000]``. A measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def synthetic_row(i: int) -> dict:
    """A record with drop, abstract and keep attributes and ~120 words of text."""
    name, city, phone = f"Person{i} Example", f"Town{i % 97}", f"+1 555 {i:07d}"
    body = " ".join(f"word{(i * 7 + k) % 1000}" for k in range(100))
    return {
        "id": f"s{i:06d}", "record_type": "Synthetic note", "category": f"cat{i % 6}",
        "original_record": f"Note about {name} from {city}, phone {phone}. {body}",
        "sanitized_record": f"Note about someone. {body}",
        "base_instruction": f"- Drop the name '{name}'.\n- Generalize the city.",
        "smoothed_instruction": "Remove the name and make the city vague.",
        "attributes_to_drop": {"selected": {"full_name": name}, "group": False},
        "attributes_to_abstract": {"selected": [{"attrs": {"city": city}, "group_name": "Place"}], "group": True},
        "attributes_to_keep": {"phone": {"value": phone, "sanitization": "keep", "group_name": None}},
    }


def write_task(directory: Path, n: int) -> Path:
    rows = directory / f"synthetic_{n}.jsonl"
    with open(rows, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps(synthetic_row(i)) + "\n")
    yaml = directory / f"synthetic_{n}.yaml"
    yaml.write_text(
        f"task: synthetic_{n}\ninclude: {REPO / 'tasks' / '_privasis_base.yaml'}\n"
        f"dataset:\n  path: null\n  revision: null\n  data_files: {rows.name}\n",
        encoding="utf-8",
    )
    return yaml


def child(argv: list[str]) -> None:
    """Run the CLI in this process, then print the peak RSS (MB) as the last line."""
    from privasis_bench.cli import main

    sys.argv = ["privasis-bench", *argv]
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    print(f"PEAK_RSS_MB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}")


def measure(argv: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", *argv], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{proc.stderr[-2000:]}")
    rss = float(proc.stdout.strip().splitlines()[-1].split()[1])
    return elapsed, rss


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--bootstrap-samples", type=int, default=1000)
    args = parser.parse_args()
    print(f"{'records':>8} {'command':<8} {'seconds':>8} {'records/s':>10} {'peak RSS MB':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            task = write_task(Path(tmp), n)
            out = Path(tmp) / f"run_{n}"
            common = ["--bootstrap-samples", str(args.bootstrap_samples)]
            runs = {
                "run": ["run", "-m", "identity", "--judge", "none", "-t", str(task), "-o", str(out), "--no-cache",
                        "--no-progress", *common],
                "rescore": ["rescore", str(out)],
            }
            for label, argv in runs.items():
                seconds, rss = measure(argv)
                print(f"{n:>8} {label:<8} {seconds:>8.1f} {n / seconds:>10.0f} {rss:>12.0f}", flush=True)


if __name__ == "__main__":
    main()
