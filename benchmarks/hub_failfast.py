"""Print how long `data inspect` takes to fail when the hub is unreachable (target: under 5 s).

Usage: python benchmarks/hub_failfast.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def time_failure(env_overrides: dict[str, str]) -> float:
    """Seconds until `privasis-bench data inspect --tasks privasis_vanilla` exits (it must fail)."""
    with tempfile.TemporaryDirectory() as hf_home:
        env = {**os.environ, "HF_HOME": hf_home, **env_overrides}
        if "HF_HUB_OFFLINE" not in env_overrides:
            env.pop("HF_HUB_OFFLINE", None)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "privasis_bench", "data", "inspect", "--tasks", "privasis_vanilla"],
                              capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
    if proc.returncode == 0:
        raise SystemExit("unexpected success: the hub (or a cached copy) was reachable")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for label, env in (("HF_HUB_OFFLINE=1", {"HF_HUB_OFFLINE": "1"}),
                       ("unreachable endpoint", {"HF_ENDPOINT": "http://127.0.0.1:9"}),
                       ("default endpoint, no network", {})):
        times = [time_failure(env) for _ in range(args.repeat)]
        print(f"{label:32s} median {statistics.median(times):5.2f} s  max {max(times):5.2f} s  (target < 5 s)")


if __name__ == "__main__":
    main()
