"""How `leaderboard verify` and `leaderboard build` scale: seconds and peak memory per entry on a large synthetic board.

A synthetic board is written to a temporary directory: ``--entries`` copies of the shipped ``baselines/identity``
entry (all 29 sample records, no judge), each under its own name with every model output padded by distinct filler
text up to ``--fill`` of the task's output budget (so entries differ in content and their outputs are as long as
the verifier allows), plus, with ``--hostile``, entries that try to stall CI (1e9 bootstrap samples, deeply nested
JSON, a binary samples file, an output far over the budget). Verification of each entry is timed with its Python
peak memory (tracemalloc); then `leaderboard build` over the whole board is timed in a child process that reports
its peak resident set size.

Usage: ``python benchmarks/leaderboard_verify.py [--entries 40] [--fill 0.9] [--hostile]``. A measuring tool, not a
test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from privasis_bench.leaderboard.bounds import CHARS_PER_TOKEN  # noqa: E402
from privasis_bench.leaderboard.provenance import sha256_file  # noqa: E402
from privasis_bench.leaderboard.verify import verify_submission  # noqa: E402
from privasis_bench.results.files import dumps_json  # noqa: E402

SOURCE = REPO / "submissions" / "baselines__identity" / "privasis_sample"
TASK = "privasis_sample"


def _entry(board: Path, name: str) -> Path:
    folder = board / name.replace("/", "__") / TASK
    shutil.copytree(SOURCE, folder)
    sub = json.loads((folder / "submission.json").read_text())
    sub["name"] = name
    (folder / "submission.json").write_text(dumps_json(sub))
    return folder


def _rehash(folder: Path) -> None:
    sub = json.loads((folder / "submission.json").read_text())
    sub["files"] = {n: sha256_file(folder / n) for n in sub["files"]}
    (folder / "submission.json").write_text(dumps_json(sub))


def entry_code(i: int) -> str:
    """A distinct code for entry ``i`` in digits no two of which are look-alikes (``0``/``o``, ``6``/``8``/``b`` ...
    fold together when names are compared, leaderboard/naming.py), so no two synthetic names are one name."""
    if not 0 <= i < 4**5:
        raise ValueError(f"entry {i}: the synthetic board names at most {4**5} entries")
    digits = ""
    for _ in range(5):
        i, d = divmod(i, 4)
        digits = "3479"[d] + digits
    return digits


def make_board(board: Path, entries: int, fill: float, hostile: bool) -> list[Path]:
    """Write the synthetic board; returns the entry folders."""
    budget = int(1024 * CHARS_PER_TOKEN * fill)
    folders = []
    for i in range(entries):
        folder = _entry(board, f"bench/model-{entry_code(i)}")
        rows = [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]
        for row in rows:
            if isinstance(row.get("output"), str):
                pad = (f"\n\nfiller {i} " + "lorem ipsum " * max(0, (budget - len(row["output"])) // 12)).rstrip()
                row["output"] = row["raw_output"] = row["output"] + pad
        (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        _rehash(folder)
        folders.append(folder)
    if hostile:
        folder = _entry(board, "hostile/bootstrap")
        res = json.loads((folder / "results.json").read_text())
        res["metrics"]["bootstrap"]["samples"] = 10**9
        (folder / "results.json").write_text(dumps_json(res))
        _rehash(folder)
        folder2 = _entry(board, "hostile/nested")
        (folder2 / "results.json").write_text("[" * 200000 + "]" * 200000)
        folder3 = _entry(board, "hostile/binary")
        (folder3 / "samples.jsonl").write_bytes(bytes(range(256)) * 4096)
        folder4 = _entry(board, "hostile/long-output")
        rows = [json.loads(x) for x in (folder4 / "samples.jsonl").read_text().splitlines()]
        rows[0]["output"] = rows[0]["raw_output"] = "x" * 10_000_000
        (folder4 / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        _rehash(folder4)
        folders += [folder, folder2, folder3, folder4]
    return folders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=40)
    parser.add_argument("--fill", type=float, default=0.9, help="share of the output budget each output is padded to")
    parser.add_argument("--hostile", action="store_true", help="add entries that try to stall or crash verification")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        board = Path(tmp) / "submissions"
        folders = make_board(board, args.entries, args.fill, args.hostile)
        size = sum(p.stat().st_size for p in board.rglob("*") if p.is_file())
        print(f"board: {len(folders)} entries, {size / 1e6:.1f} MB on disk")
        print(f"{'entry':<28} {'MB':>7} {'verify s':>9} {'peak MB':>8}  outcome")
        times = []
        for folder in folders:
            tracemalloc.start()
            start = time.perf_counter()
            v = verify_submission(folder)
            took = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            times.append(took)
            mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
            outcome = "ok" if v.ok else f"rejected: {v.problems[0][len(str(folder)) + 1:][:70]}"
            print(f"{folder.parent.name:<28} {mb:>7.2f} {took:>9.3f} {peak:>8.1f}  {outcome}")
        print(f"verify: {sum(times):.2f} s for {len(folders)} entries ({sum(times) / len(folders):.3f} s per entry)")
        code = ("import resource, sys, time; from privasis_bench.leaderboard.build import build_board; t = time.perf_counter(); "
                f"build_board({str(board)!r}, {str(Path(tmp) / 'board')!r}); "
                "print(f'{time.perf_counter() - t:.2f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}')")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                             env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        if out.returncode:
            print(f"build failed: {out.stderr.strip().splitlines()[-1]}")
            return
        seconds, rss = out.stdout.split()
        print(f"build: {seconds} s for {len(folders)} entries ({float(seconds) / len(folders):.3f} s per entry), "
              f"peak RSS {rss} MB")


if __name__ == "__main__":
    main()
