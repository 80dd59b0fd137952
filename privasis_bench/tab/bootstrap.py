"""Seeded bootstrap intervals for TAB's measures, resampling documents.

Each replicate draws as many documents as there are, with replacement, sums their tallies and recomputes every
measure; the interval is the percentile range at the requested confidence. The same seed gives the same intervals.
"""

from __future__ import annotations

import random
from typing import Sequence

from privasis_bench.tab.metrics import RATIOS, DocTally, pooled, total


def bootstrap_intervals(tallies: Sequence[DocTally], *, samples: int, seed: int,
                        confidence: float) -> dict[str, dict[str, float]]:
    """measure -> {low, high} over ``samples`` document resamples (empty when there are no samples or documents)."""
    if samples <= 0 or not tallies:
        return {}
    rng = random.Random(seed)
    names = [*RATIOS, "token_f1"]
    draws: dict[str, list[float]] = {name: [] for name in names}
    n = len(tallies)
    for _ in range(samples):
        values = pooled(total(tallies[rng.randrange(n)] for _ in range(n)))
        for name in names:
            draws[name].append(float(values[name]))  # type: ignore[arg-type]
    alpha = (1 - confidence) / 2
    return {name: {"low": _quantile(sorted(v), alpha), "high": _quantile(sorted(v), 1 - alpha)}
            for name, v in draws.items()}


def _quantile(ordered: list[float], q: float) -> float:
    """Linear-interpolation quantile of a sorted list."""
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
