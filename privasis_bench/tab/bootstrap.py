"""Seeded bootstrap intervals for TAB's measures, resampling documents.

Each replicate draws as many documents as there are, with replacement, sums their tallies and recomputes every
measure; the interval is the percentile range at the requested confidence. The same seed gives the same intervals,
whatever the order of the rows: documents are resampled in id order.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from privasis_bench.tab.metrics import RATIOS, DocTally, pooled, total


def bootstrap_intervals(tallies: Sequence[DocTally], *, samples: int, seed: int,
                        confidence: float) -> dict[str, dict[str, float]]:
    """measure -> {low, high} over ``samples`` document resamples (empty when there are no samples or documents)."""
    if samples <= 0 or not tallies:
        return {}
    rng = random.Random(seed)
    tallies = sorted(tallies, key=lambda t: t.doc_id)  # id order: the draw ignores the order of the rows
    names = [*RATIOS, "token_f1"]
    draws: dict[str, list[float]] = {name: [] for name in names}
    n = len(tallies)
    for _ in range(samples):
        values = pooled(total(tallies[rng.randrange(n)] for _ in range(n)))
        for name in names:
            if values[name] is not None:  # a resample with nothing to count for this measure is left out of it
                draws[name].append(float(values[name]))  # type: ignore[arg-type]
    alpha = (1 - confidence) / 2
    return {name: {"low": _quantile(sorted(v), alpha), "high": _quantile(sorted(v), 1 - alpha)}
            for name, v in draws.items() if v}


def _quantile(ordered: list[float], q: float) -> float:
    """Linear-interpolation quantile of a sorted list."""
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def paired_comparison(a: Sequence[DocTally], b: Sequence[DocTally], *, samples: int, seed: int,
                      confidence: float) -> dict[str, Any]:
    """Two runs on their common documents, resampled together: per measure A, B and A-B (in percent), a
    percentile interval of A-B and a two-sided bootstrap p-value (the shape ``privasis-bench compare`` prints)."""
    by_b = {t.doc_id: t for t in b}
    pairs = sorted(((t, by_b[t.doc_id]) for t in a if t.doc_id in by_b), key=lambda p: p[0].doc_id)
    names = [*RATIOS, "token_f1"]
    va, vb = pooled(total(p[0] for p in pairs)), pooled(total(p[1] for p in pairs))
    rng = random.Random(seed)
    diffs: dict[str, list[float]] = {name: [] for name in names}
    n = len(pairs)
    for _ in range(samples if n else 0):
        picks = [pairs[rng.randrange(n)] for _ in range(n)]
        pa, pb = pooled(total(p[0] for p in picks)), pooled(total(p[1] for p in picks))
        for name in names:
            if pa[name] is not None and pb[name] is not None:
                diffs[name].append(100 * (float(pa[name]) - float(pb[name])))  # type: ignore[arg-type]
    alpha = (1 - confidence) / 2
    metrics: dict[str, Any] = {}
    for name in names:
        d = sorted(diffs[name])
        if va[name] is None or vb[name] is None:  # nothing to count in one run: no difference to report
            metrics[name] = {"a": _pct(va[name]), "b": _pct(vb[name]), "diff": None, "ci_low": None, "ci_high": None,
                             "p_value": None}
            continue
        metrics[name] = {"a": 100 * float(va[name]), "b": 100 * float(vb[name]),  # type: ignore[arg-type]
                         "diff": 100 * (float(va[name]) - float(vb[name])),  # type: ignore[arg-type]
                         "ci_low": _quantile(d, alpha) if d else None, "ci_high": _quantile(d, 1 - alpha) if d else None,
                         "p_value": min(1.0, 2 * min(sum(x <= 0 for x in d), sum(x >= 0 for x in d)) / len(d)) if d else None}
    return {"common_records": n, "only_a": len(a) - n, "only_b": len(b) - n, "unit": "percent",
            "bootstrap": {"samples": samples, "seed": seed, "confidence": confidence, "unit": "document"},
            "metrics": metrics}


def _pct(value: Any) -> float | None:
    return None if value is None else 100 * float(value)
