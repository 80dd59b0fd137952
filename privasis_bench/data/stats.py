"""Descriptive statistics of loaded records (``privasis-bench data inspect``)."""

from __future__ import annotations

from collections import Counter
from statistics import mean, median
from typing import Any

from privasis_bench.data.loading import LoadedRecords


def value_type(value: Any) -> str:
    """A short type label for an attribute value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "str", list: "list", dict: "dict"}.get(type(value), type(value).__name__)


def dataset_stats(loaded: LoadedRecords) -> dict[str, Any]:
    """Counts and distributions over records, targets and keep attributes."""
    records = loaded.records
    targets = [t for r in records for t in r.targets]
    keep = [k for r in records for k in r.keep]
    words = [len(r.text.split()) for r in records]
    return {
        "records": len(records),
        "scored_records": len(loaded.scored),
        "excluded_records": len(loaded.excluded),
        "excluded_reasons": dict(Counter(r.excluded_reason for r in loaded.excluded)),
        "invalid_rows_skipped": len(loaded.invalid),
        "targets": len(targets),
        "targets_by_kind": dict(Counter(t.kind for t in targets)),
        "targets_grouped_vs_individual": {
            "grouped": sum(t.group is not None for t in targets),
            "individual": sum(t.group is None for t in targets),
        },
        "target_value_types": dict(Counter(value_type(t.value) for t in targets)),
        "keep_attributes": len(keep),
        "keep_value_types": dict(Counter(value_type(k.value) for k in keep)),
        "records_by_category": dict(Counter(r.breakdown_category for r in records).most_common(12)),
        "words_per_record": {
            "min": min(words, default=0),
            "median": median(words) if words else 0,
            "mean": round(mean(words), 1) if words else 0,
            "max": max(words, default=0),
        },
        "ids_sha256": loaded.ids_hash,
    }
