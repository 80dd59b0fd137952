"""Metrics (protocol §5): pure functions from record verdicts to numbers, plus bootstrap CIs.

Every rate is reported in percent. Only scored records enter the metrics: records whose status is
"judged" or "unparseable" (excluded records never reach the judge; unjudged ones are reported separately by the
caller). An unparseable record is scored with its unreadable answers as failures: an unparseable target is not
sanitized, an unparseable keep attribute is not retained (the tallies count them in the denominators only).
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Any, Iterator, Sequence

import numpy as np

from privasis_bench.protocol.tallies import MetricTallies
from privasis_bench.protocol.verdicts import LEAK_TIERS, SCORED_STATUSES, RecordVerdict

#: The seven Table-4 columns, in the paper's order.
HEADLINE_METRICS: tuple[str, ...] = (
    "sanitization_attribute",
    "sanitization_attribute_per_record",
    "sanitization_record",
    "retention_attribute",
    "retention_attribute_per_record",
    "retention_record",
    "full_successful_record",
)
METRIC_LABELS: dict[str, str] = {
    "sanitization_attribute": "San. Attr",
    "sanitization_attribute_per_record": "San. Att/Rec",
    "sanitization_record": "San. Rec",
    "retention_attribute": "Ret. Attr",
    "retention_attribute_per_record": "Ret. Att/Rec",
    "retention_record": "Ret. Rec",
    "full_successful_record": "Full",
}


def scored(verdicts: Sequence[RecordVerdict]) -> list[RecordVerdict]:
    """The records that enter the metrics (status "judged" or "unparseable", see :data:`SCORED_STATUSES`)."""
    return [v for v in verdicts if v.status in SCORED_STATUSES]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise num/den in percent, NaN where den is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 100.0 * num / np.where(den > 0, den, 1), np.nan)


def _headline(a: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, np.ndarray]:
    """The seven metrics for each row of the index matrix ``idx`` (shape: draws x records)."""
    take = {k: v[idx] for k, v in a.items()}
    n = idx.shape[1]
    san_rate = _ratio(take["sanitized"], take["targets_judged"])
    ret_rate = _ratio(take["retained"], take["keep_judged"])
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an undefined mean is NaN by design
        out = {
            "sanitization_attribute": _ratio(take["sanitized"].sum(1), take["targets_total"].sum(1)),
            "sanitization_attribute_per_record": np.nanmean(san_rate, axis=1),
            "sanitization_record": 100.0 * take["san_complete"].sum(1) / n if n else np.full(len(idx), np.nan),
            "retention_attribute": _ratio(take["retained"].sum(1), take["keep_total"].sum(1)),
            "retention_attribute_per_record": np.nanmean(ret_rate, axis=1),
            "retention_record": 100.0 * take["ret_complete"].sum(1) / n if n else np.full(len(idx), np.nan),
            "full_successful_record": 100.0 * (take["san_complete"] * take["ret_complete"]).sum(1) / n
            if n
            else np.full(len(idx), np.nan),
        }
    return out


def _num(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


#: Bootstrap draws are made in row chunks of at most this many (draw, record) cells, so memory stays bounded;
#: a seeded generator yields the same indexes whether drawn at once or in successive chunks.
_BOOTSTRAP_CELLS = 2_000_000


def _tallies(verdicts: Sequence[RecordVerdict] | MetricTallies) -> MetricTallies:
    return verdicts if isinstance(verdicts, MetricTallies) else MetricTallies.from_verdicts(verdicts)


def _draws(rng: np.random.Generator, n: int, samples: int) -> Iterator[np.ndarray]:
    """Bootstrap index matrices (rows: draws, columns: resampled record positions), in bounded chunks."""
    rows = max(1, _BOOTSTRAP_CELLS // max(n, 1))
    for start in range(0, samples, rows):
        yield rng.integers(0, n, size=(min(rows, samples - start), n))


def headline_metrics(verdicts: Sequence[RecordVerdict] | MetricTallies) -> dict[str, float | None]:
    """The seven Table-4 metrics (percent; None when undefined) over the given scored records."""
    tallies = _tallies(verdicts)
    idx = np.arange(len(tallies))[None, :]
    return {k: _num(v[0]) for k, v in _headline(tallies.arrays(), idx).items()}


def bootstrap_ci(
    verdicts: Sequence[RecordVerdict] | MetricTallies, *, samples: int, seed: int, confidence: float
) -> dict[str, dict[str, float | None]]:
    """Percentile bootstrap CI of each headline metric, resampling records (seeded). The records are put in
    record-id order first, so the draw depends on the seed and the records, never on the order of the rows."""
    tallies = _tallies(verdicts)
    n = len(tallies)
    if samples <= 0 or n == 0:
        return {k: {"low": None, "high": None} for k in HEADLINE_METRICS}
    a = tallies.arrays(sorted(range(n), key=lambda i: tallies.record_ids[i]))
    chunks = [_headline(a, idx) for idx in _draws(np.random.default_rng(seed), n, samples)]
    draws = {k: np.concatenate([c[k] for c in chunks]) for k in HEADLINE_METRICS}
    lo, hi = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    out: dict[str, dict[str, float | None]] = {}
    for k, vals in draws.items():
        vals = vals[~np.isnan(vals)]
        out[k] = {"low": _num(np.percentile(vals, lo)), "high": _num(np.percentile(vals, hi))} if len(vals) else {"low": None, "high": None}
    return out


def leak_breakdown(verdicts: Sequence[RecordVerdict] | MetricTallies) -> dict[str, Any]:
    """Leak-type counts and their ratios (percent) over all failed targets (paper Table 5)."""
    counts = _tallies(verdicts).leak_tiers
    total = sum(counts.values())
    return {
        "failed_targets": total,
        "counts": {tier: counts.get(tier, 0) for tier in LEAK_TIERS},
        "ratios": {tier: (100.0 * counts.get(tier, 0) / total if total else None) for tier in LEAK_TIERS},
    }


def is_full_success(rv: RecordVerdict) -> bool:
    """Complete sanitization and complete retention."""
    return bool(MetricTallies.from_verdicts([rv]).full_success()[0])


def failures_by_category(verdicts: Sequence[RecordVerdict] | MetricTallies) -> list[dict[str, Any]]:
    """Per category: records, failed records (not full success), share of all failures (Table 6)."""
    tallies = _tallies(verdicts)
    cats = tallies.record_categories()
    total = Counter(cats)
    failed = Counter(c for c, ok in zip(cats, tallies.full_success()) if not ok)
    all_failed = sum(failed.values())
    rows = [
        {
            "category": cat,
            "records": total[cat],
            "failed_records": failed.get(cat, 0),
            "failure_rate": 100.0 * failed.get(cat, 0) / total[cat],
            "share_of_failures": 100.0 * failed.get(cat, 0) / all_failed if all_failed else None,
        }
        for cat in total
    ]
    return sorted(rows, key=lambda r: (-r["failed_records"], r["category"]))


def top_failed_attributes(verdicts: Sequence[RecordVerdict] | MetricTallies, top: int) -> dict[str, list[dict[str, Any]]]:
    """Most often leaked target names and most often lost keep names (paper Table 10)."""
    tallies = _tallies(verdicts)

    def rows(c: Counter, seen: Counter) -> list[dict[str, Any]]:
        total = sum(c.values())
        ordered = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return [
            {"name": name, "failed": n, "occurrences": seen[name], "failure_rate": 100.0 * n / seen[name],
             "share_of_failures": 100.0 * n / total}
            for name, n in ordered
        ]

    return {"targets": rows(tallies.leaked_names, tallies.seen_target_names),
            "keep": rows(tallies.lost_keep_names, tallies.seen_keep_names)}


def compute_metrics(verdicts: Sequence[RecordVerdict] | MetricTallies, *, bootstrap_samples: int, seed: int,
                    confidence: float, top_failed: int) -> dict[str, Any]:
    """Every number of a results file, from the scored records' verdicts (or their tallies) only."""
    tallies = _tallies(verdicts)
    return {
        "unit": "percent",
        "scored_records": len(tallies),
        "headline": headline_metrics(tallies),
        "ci": bootstrap_ci(tallies, samples=bootstrap_samples, seed=seed, confidence=confidence),
        "bootstrap": {"samples": bootstrap_samples, "seed": seed, "confidence": confidence, "unit": "record"},
        "top_failed_limit": top_failed,
        "leaks": leak_breakdown(tallies),
        "failures_by_category": failures_by_category(tallies),
        "top_failed_attributes": top_failed_attributes(tallies, top_failed),
    }


def paired_bootstrap(
    a: Sequence[RecordVerdict] | MetricTallies, b: Sequence[RecordVerdict] | MetricTallies, *, samples: int, seed: int, confidence: float
) -> dict[str, Any]:
    """Paired comparison of two runs on their common scored record ids (same resampling for both).

    For each headline metric: A, B, A-B, a percentile CI of A-B and a two-sided bootstrap p-value
    (twice the smaller share of resampled differences on either side of zero).
    """
    ta, tb = _tallies(a), _tallies(b)
    bpos = {rid: i for i, rid in enumerate(tb.record_ids)}
    common = sorted(rid for rid in ta.record_ids if rid in bpos)  # id order: the draw ignores row order
    apos = {rid: i for i, rid in enumerate(ta.record_ids)}
    arrays_a = ta.arrays([apos[i] for i in common])
    arrays_b = tb.arrays([bpos[i] for i in common])
    first = np.arange(len(common))[None, :]
    ha = {k: _num(v[0]) for k, v in _headline(arrays_a, first).items()}
    hb = {k: _num(v[0]) for k, v in _headline(arrays_b, first).items()}
    out: dict[str, Any] = {
        "common_records": len(common),
        "only_a": len(ta) - len(common),
        "only_b": len(tb) - len(common),
        "bootstrap": {"samples": samples, "seed": seed, "confidence": confidence},
        "metrics": {},
    }
    draws_a = draws_b = None
    if samples > 0 and common:
        chunks = [(_headline(arrays_a, idx), _headline(arrays_b, idx))
                  for idx in _draws(np.random.default_rng(seed), len(common), samples)]
        draws_a = {k: np.concatenate([ca[k] for ca, _ in chunks]) for k in HEADLINE_METRICS}
        draws_b = {k: np.concatenate([cb[k] for _, cb in chunks]) for k in HEADLINE_METRICS}
    lo, hi = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    for k in HEADLINE_METRICS:
        row: dict[str, Any] = {"a": ha[k], "b": hb[k], "diff": None, "ci_low": None, "ci_high": None, "p_value": None}
        if ha[k] is not None and hb[k] is not None:
            row["diff"] = ha[k] - hb[k]
        if draws_a is not None:
            d = draws_a[k] - draws_b[k]
            d = d[~np.isnan(d)]
            if len(d):
                row["ci_low"], row["ci_high"] = float(np.percentile(d, lo)), float(np.percentile(d, hi))
                row["p_value"] = float(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))
        out["metrics"][k] = row
    return out
