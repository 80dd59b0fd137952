"""Seconds to render one viewer record (highlight + word diff) as the model output grows: the board build must stay
linear in the size of the submissions, so doubling the output should roughly double the time.

    python benchmarks/board_long_output.py [--words 5000 10000 20000 40000 80000]

Two shapes per size: an output that repeats a target value in every sentence (many highlight spans) and an
output unrelated to the original (the changed middle of the word diff is as large as it gets).
"""

from __future__ import annotations

import argparse
import time

from privasis_bench.leaderboard.viewer import highlight, word_diff


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, nargs="+", default=[5000, 10000, 20000, 40000, 80000])
    args = parser.parse_args()
    marks = [("Ana Lopez", "t-direct", "target name"), ("Oslo", "t-inference", "target city"),
             ("7.1%", "k-retained", "keep hba1c")]
    original = " ".join(["Ana Lopez visited Oslo and her HbA1c was 7.1% ."] * 50)
    print(f"{'words':>8} {'repeat: highlight s':>20} {'repeat: diff s':>15} {'unrelated: diff s':>18}")
    for n in args.words:
        repeated = " ".join(["Ana Lopez visited Oslo and her HbA1c was 7.1% ."] * (n // 10))
        unrelated = " ".join(f"w{i}" for i in range(n))
        print(f"{n:>8} {_timed(highlight, repeated, marks):>20.3f} {_timed(word_diff, original, repeated):>15.3f} "
              f"{_timed(word_diff, original, unrelated):>18.3f}")


if __name__ == "__main__":
    main()
