"""``privasis-bench agreement``: how far two judgings of the same outputs agree, decision by decision.

Two runs (for example one output set judged by two judges, or by one judge with two prompts) are paired on their
common scored records and, inside a record, on attribute names. Each target gives one leak-tier decision (direct,
inference, proximity or sanitized) and each keep attribute one retention decision (retained or not). For both we
report the raw agreement and Cohen's kappa, plus the Table-4 metric deltas with paired bootstrap CIs (the same
computation as ``compare``) and the attributes the two judgings disagree on most. Nothing here calls a model.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Hashable, Iterable, Sequence

import numpy as np

from privasis_bench.protocol.metrics import paired_bootstrap, scored
from privasis_bench.protocol.verdicts import LEAK_TIERS
from privasis_bench.results.files import ResultsError, common_tasks, load_results, load_sample_rows, verdicts_from_rows

#: The leak-tier labels a target decision can take (null, unjudged and unparseable targets are not decisions).
TIER_LABELS: tuple[str, ...] = (*LEAK_TIERS, "sanitized")
RETENTION_LABELS: tuple[str, ...] = ("retained", "lost")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels for the same items; None when undefined (no items, or chance
    agreement is 1 because both raters gave one and the same label throughout)."""
    if len(a) != len(b):
        raise ValueError(f"kappa needs paired labels, got {len(a)} and {len(b)}")
    if not a:
        return None
    labels = sorted(set(a) | set(b), key=str)
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    np.add.at(table, ([index[x] for x in a], [index[y] for y in b]), 1)
    table /= table.sum()
    observed = np.trace(table)
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    return None if expected >= 1.0 else float((observed - expected) / (1.0 - expected))


def _summary(pairs: list[tuple[str, str]], labels: tuple[str, ...]) -> dict[str, Any]:
    """Agreement, kappa and confusion counts (rows: A's label, columns: B's) of paired decisions."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    confusion = Counter(pairs)
    return {
        "decisions": len(pairs),
        "agreement": 100.0 * sum(x == y for x, y in pairs) / len(pairs) if pairs else None,
        "kappa": cohen_kappa(a, b),
        "confusion": {x: {y: confusion[(x, y)] for y in labels} for x in labels},
    }


def _target_label(target: dict[str, Any]) -> str | None:
    tier = target.get("tier")
    return tier if tier in TIER_LABELS else None


def _keep_label(keep: dict[str, Any]) -> str | None:
    retained = keep.get("retained")
    return None if retained is None else ("retained" if retained else "lost")


def _paired(rows_a: Iterable[dict[str, Any]], rows_b: Iterable[dict[str, Any]], part: str, label_of) -> list[tuple[str, str, str, str]]:
    """(record id, attribute, A's label, B's label) for every attribute decided in both runs' scored records."""
    by_id_b = {r["record_id"]: r for r in rows_b if r.get("status") == "judged"}
    out = []
    for row in rows_a:
        other = by_id_b.get(row.get("record_id"))
        if row.get("status") != "judged" or other is None:
            continue
        labels_b = {item["name"]: label_of(item) for item in other.get(part) or []}
        for item in row.get(part) or []:
            la, lb = label_of(item), labels_b.get(item["name"])
            if la is not None and lb is not None:
                out.append((row["record_id"], item["name"], la, lb))
    return out


def _most_disagreed(decisions: list[tuple[str, str, str, str, str]], top: int) -> list[dict[str, Any]]:
    """Attributes ranked by how many of their decisions differ (ties: higher rate, then name)."""
    seen: Counter[tuple[str, str]] = Counter()
    differ: Counter[tuple[str, str]] = Counter()
    for kind, _rid, name, la, lb in decisions:
        seen[(kind, name)] += 1
        differ[(kind, name)] += la != lb
    rows = [{"attribute": name, "kind": kind, "decisions": seen[(kind, name)], "disagreements": n,
             "disagreement_rate": 100.0 * n / seen[(kind, name)]} for (kind, name), n in differ.items() if n]
    rows.sort(key=lambda r: (-r["disagreements"], -r["disagreement_rate"], r["attribute"]))
    return rows[:top]


def agreement_rows(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], *, top: int = 10,
                   bootstrap_samples: int = 1000, seed: int = 1234, confidence: float = 0.95) -> dict[str, Any]:
    """Everything ``agreement`` reports for one task, from the two runs' samples rows."""
    targets = _paired(rows_a, rows_b, "targets", _target_label)
    keeps = _paired(rows_a, rows_b, "keep", _keep_label)
    leak_pairs = [(la, lb) for *_, la, lb in targets]
    leaked = [("leaked" if la in LEAK_TIERS else "sanitized", "leaked" if lb in LEAK_TIERS else "sanitized")
              for la, lb in leak_pairs]
    outputs_b = {r["record_id"]: r.get("output") for r in rows_b if r.get("status") == "judged"}
    common = [r["record_id"] for r in rows_a if r.get("status") == "judged" and r["record_id"] in outputs_b]
    by_id_a = {r["record_id"]: r for r in rows_a}
    decisions = [("target", *t) for t in targets] + [("keep", *k) for k in keeps]
    return {
        "common_records": len(common),
        "outputs_differ": sum(by_id_a[rid].get("output") != outputs_b[rid] for rid in common),
        "leak_tier": _summary(leak_pairs, TIER_LABELS),
        "leaked": _summary(leaked, ("leaked", "sanitized")),
        "retention": _summary([(la, lb) for *_, la, lb in keeps], RETENTION_LABELS),
        "most_disagreed": _most_disagreed(decisions, top),
        "metric_deltas": paired_bootstrap(scored(verdicts_from_rows(rows_a)), scored(verdicts_from_rows(rows_b)),
                                          samples=bootstrap_samples, seed=seed, confidence=confidence),
    }


def agreement_runs(a: str | Path, b: str | Path, *, top: int = 10, bootstrap_samples: int | None = None,
                   seed: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Judge agreement of two runs, one entry per task present in both (bootstrap settings default to A's)."""
    out = []
    for name, da, db in common_tasks(a, b):
        boot = (load_results(da).get("metrics") or {}).get("bootstrap") or {}
        report = agreement_rows(
            load_sample_rows(da), load_sample_rows(db), top=top,
            bootstrap_samples=bootstrap_samples or boot.get("samples") or 1000,
            seed=boot.get("seed", 1234) if seed is None else seed, confidence=boot.get("confidence", 0.95),
        )
        if report["common_records"] == 0:
            raise ResultsError(f"{da} and {db}: no scored record in common")
        out.append((name, report))
    return out
