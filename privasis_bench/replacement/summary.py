"""A run's replacement measures from its samples rows: TAB's detection measures, TPS and TRIR with bootstrap
intervals over documents, NMI carried over (it needs the embeddings), and the key that says which numbers may be
ranked together.

Rows hold everything TPS and TRIR need (each document's ``tps`` and ``reidentified``), so ``privasis-bench
rescore`` recomputes them without any model.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from privasis_bench.protocol.linkage import bootstrap_rate
from privasis_bench.tab.scorer import rescore_rows


def mean(values: list[float]) -> float | None:
    """The arithmetic mean (None for no value)."""
    return sum(values) / len(values) if values else None


def interval(values: list[float], *, samples: int, seed: int, confidence: float) -> dict[str, float | None]:
    """Percentile bootstrap interval of the mean of per-document values, resampling documents (fractions)."""
    ci = bootstrap_rate(values, samples=samples, seed=seed, confidence=confidence)
    return {k: (v / 100 if v is not None else None) for k, v in ci.items()}


def summarize_rows(rows: list[dict[str, Any]], stored: dict[str, Any], *, bootstrap_samples: int, seed: int,
                   confidence: float) -> dict[str, Any]:
    """Every measure of a ``tab_replacement`` run from its rows (``stored``: earlier metrics, for NMI)."""
    metrics = rescore_rows(rows, stored, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence)
    tps = [float(r["tps"]) for r in rows if r.get("scored") and r.get("tps") is not None]
    attacked = [r for r in rows if r.get("scored") and "reidentified" in r]
    hits = [1.0 if r["reidentified"] else 0.0 for r in attacked]
    by_id = sorted(rows, key=lambda r: str(r.get("id")))  # id order: the intervals' draw ignores the rows' order
    tps_by_id = [float(r["tps"]) for r in by_id if r.get("scored") and r.get("tps") is not None]
    hits_by_id = [1.0 if r["reidentified"] else 0.0 for r in by_id if r.get("scored") and "reidentified" in r]
    settings = {"samples": bootstrap_samples, "seed": seed, "confidence": confidence}
    metrics["ci"] = {**metrics.get("ci", {}),
                     "tps": interval(tps_by_id, **settings) if tps else {"low": None, "high": None},
                     "trir": interval(hits_by_id, **settings) if hits else {"low": None, "high": None}}
    metrics.update(scorer="tab_replacement", tps=mean(tps), tps_documents=len(tps), trir=mean(hits),
                   trir_documents=len(attacked), trir_outside_background=sum(not r.get("in_background", True) for r in attacked),
                   nmi=stored.get("nmi"))
    for key in ("estimator_key",):
        if key in stored:
            metrics[key] = stored[key]
    return metrics


def estimator_key(scorer: dict[str, Any]) -> str:
    """A short hash of everything that decides the scale of TPS, TRIR and NMI (estimator, models, attack and its
    settings, background file, clustering): only runs with the same key may be ranked together."""
    trir = dict(scorer.get("trir") or {})
    trir.pop("individuals", None)
    basis = {"ic": scorer.get("information_content", {}).get("name"),
             "similarity": scorer.get("similarity", {}).get("model"),
             "spans": scorer.get("spans", {}).get("spacy_pipeline") or scorer.get("spans", {}).get("segmenter"),
             "pairing": scorer.get("pairing"), "trir": trir,
             "nmi": {k: v for k, v in (scorer.get("nmi") or {}).items() if k != "max_seq_length"}}
    if scorer.get("variant"):  # a departure from the paper's text (absent, and not hashed, by default)
        basis["variant"] = scorer["variant"]
    return hashlib.sha256(json.dumps(basis, sort_keys=True, default=str).encode()).hexdigest()[:16]
