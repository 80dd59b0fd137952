"""Metrics (protocol §5): pure functions from record verdicts to numbers, plus bootstrap CIs.

Every rate is reported in percent. Only scored records enter the metrics: records whose status is
"judged" (excluded records never reach the judge; unjudged and unparseable ones are reported
separately by the caller).
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from privasis_bench.protocol.verdicts import LEAK_TIERS, RecordVerdict

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


@dataclass(frozen=True)
class RecordCounts:
    """What one scored record contributes to the metrics."""

    targets_total: int  # including null-valued targets
    targets_judged: int  # non-null targets
    sanitized: int
    keep_total: int  # including null-valued keep attributes
    keep_judged: int
    retained: int

    @property
    def san_complete(self) -> bool:
        return self.targets_judged > 0 and self.sanitized == self.targets_judged

    @property
    def ret_complete(self) -> bool:
        return self.keep_judged > 0 and self.retained == self.keep_judged


def record_counts(rv: RecordVerdict) -> RecordCounts:
    """Count one record's targets, sanitized targets, keep attributes and retained ones."""
    judged_targets = [t for t in rv.targets if t.tier != "null"]
    judged_keep = [k for k in rv.keep if k.via != "null"]
    return RecordCounts(
        targets_total=len(rv.targets),
        targets_judged=len(judged_targets),
        sanitized=sum(t.tier == "sanitized" for t in judged_targets),
        keep_total=len(rv.keep),
        keep_judged=len(judged_keep),
        retained=sum(k.retained is True for k in judged_keep),
    )


def scored(verdicts: Sequence[RecordVerdict]) -> list[RecordVerdict]:
    """The records that enter the metrics (status "judged")."""
    return [v for v in verdicts if v.status == "judged"]


def _arrays(verdicts: Sequence[RecordVerdict]) -> dict[str, np.ndarray]:
    rows = [record_counts(v) for v in verdicts]
    col = lambda name: np.array([getattr(r, name) for r in rows], dtype=float)  # noqa: E731
    return {
        "targets_total": col("targets_total"),
        "targets_judged": col("targets_judged"),
        "sanitized": col("sanitized"),
        "keep_total": col("keep_total"),
        "keep_judged": col("keep_judged"),
        "retained": col("retained"),
        "san_complete": np.array([r.san_complete for r in rows], dtype=float),
        "ret_complete": np.array([r.ret_complete for r in rows], dtype=float),
    }


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


def headline_metrics(verdicts: Sequence[RecordVerdict]) -> dict[str, float | None]:
    """The seven Table-4 metrics (percent; None when undefined) over the given scored records."""
    a = _arrays(verdicts)
    idx = np.arange(len(verdicts))[None, :]
    return {k: _num(v[0]) for k, v in _headline(a, idx).items()}


def bootstrap_ci(
    verdicts: Sequence[RecordVerdict], *, samples: int, seed: int, confidence: float
) -> dict[str, dict[str, float | None]]:
    """Percentile bootstrap CI of each headline metric, resampling records (seeded)."""
    n = len(verdicts)
    if samples <= 0 or n == 0:
        return {k: {"low": None, "high": None} for k in HEADLINE_METRICS}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(samples, n))
    draws = _headline(_arrays(verdicts), idx)
    lo, hi = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    out: dict[str, dict[str, float | None]] = {}
    for k, vals in draws.items():
        vals = vals[~np.isnan(vals)]
        out[k] = {"low": _num(np.percentile(vals, lo)), "high": _num(np.percentile(vals, hi))} if len(vals) else {"low": None, "high": None}
    return out


def leak_breakdown(verdicts: Sequence[RecordVerdict]) -> dict[str, Any]:
    """Leak-type counts and their ratios (percent) over all failed targets (paper Table 5)."""
    counts = Counter(t.tier for v in verdicts for t in v.targets if t.tier in LEAK_TIERS)
    total = sum(counts.values())
    return {
        "failed_targets": total,
        "counts": {tier: counts.get(tier, 0) for tier in LEAK_TIERS},
        "ratios": {tier: (100.0 * counts.get(tier, 0) / total if total else None) for tier in LEAK_TIERS},
    }


def is_full_success(rv: RecordVerdict) -> bool:
    """Complete sanitization and complete retention."""
    c = record_counts(rv)
    return c.san_complete and c.ret_complete


def failures_by_category(verdicts: Sequence[RecordVerdict]) -> list[dict[str, Any]]:
    """Per category: records, failed records (not full success), share of all failures (Table 6)."""
    total = Counter(v.category for v in verdicts)
    failed = Counter(v.category for v in verdicts if not is_full_success(v))
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


def top_failed_attributes(verdicts: Sequence[RecordVerdict], top: int) -> dict[str, list[dict[str, Any]]]:
    """Most often leaked target names and most often lost keep names (paper Table 10)."""
    leaked = Counter(t.name for v in verdicts for t in v.targets if t.tier in LEAK_TIERS)
    seen_t = Counter(t.name for v in verdicts for t in v.targets if t.tier != "null")
    lost = Counter(k.name for v in verdicts for k in v.keep if k.retained is False)
    seen_k = Counter(k.name for v in verdicts for k in v.keep if k.via != "null")

    def rows(c: Counter, seen: Counter) -> list[dict[str, Any]]:
        total = sum(c.values())
        ordered = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return [
            {"name": name, "failed": n, "occurrences": seen[name], "failure_rate": 100.0 * n / seen[name],
             "share_of_failures": 100.0 * n / total}
            for name, n in ordered
        ]

    return {"targets": rows(leaked, seen_t), "keep": rows(lost, seen_k)}


def compute_metrics(verdicts: Sequence[RecordVerdict], *, bootstrap_samples: int, seed: int, confidence: float, top_failed: int) -> dict[str, Any]:
    """Every number of a results file, from the scored records' verdicts only."""
    return {
        "unit": "percent",
        "scored_records": len(verdicts),
        "headline": headline_metrics(verdicts),
        "ci": bootstrap_ci(verdicts, samples=bootstrap_samples, seed=seed, confidence=confidence),
        "bootstrap": {"samples": bootstrap_samples, "seed": seed, "confidence": confidence, "unit": "record"},
        "top_failed_limit": top_failed,
        "leaks": leak_breakdown(verdicts),
        "failures_by_category": failures_by_category(verdicts),
        "top_failed_attributes": top_failed_attributes(verdicts, top_failed),
    }


def paired_bootstrap(
    a: Sequence[RecordVerdict], b: Sequence[RecordVerdict], *, samples: int, seed: int, confidence: float
) -> dict[str, Any]:
    """Paired comparison of two runs on their common scored record ids (same resampling for both).

    For each headline metric: A, B, A-B, a percentile CI of A-B and a two-sided bootstrap p-value
    (twice the smaller share of resampled differences on either side of zero).
    """
    bmap = {v.record_id: v for v in b}
    common = [v.record_id for v in a if v.record_id in bmap]
    amap = {v.record_id: v for v in a}
    va = [amap[i] for i in common]
    vb = [bmap[i] for i in common]
    ha, hb = headline_metrics(va), headline_metrics(vb)
    out: dict[str, Any] = {
        "common_records": len(common),
        "only_a": len(a) - len(common),
        "only_b": len(b) - len(common),
        "bootstrap": {"samples": samples, "seed": seed, "confidence": confidence},
        "metrics": {},
    }
    draws_a = draws_b = None
    if samples > 0 and common:
        idx = np.random.default_rng(seed).integers(0, len(common), size=(samples, len(common)))
        draws_a, draws_b = _headline(_arrays(va), idx), _headline(_arrays(vb), idx)
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
