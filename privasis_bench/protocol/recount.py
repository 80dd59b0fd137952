"""Counting ``samples.jsonl`` again for ``rescore``: the counts and record-id lists of results.json must agree.

Metrics alone can agree while the bookkeeping does not (a row dropped from the samples file, a record listed as
failed that is not, a record id written twice); rescore names every such difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from privasis_bench.protocol.sink import MISSING_PREDICTION


@dataclass
class RowCounts:
    """What the samples rows themselves say, accumulated one row at a time."""

    ids: dict[str, int] = field(default_factory=dict)  # record id -> first row number
    duplicates: list[str] = field(default_factory=list)
    judged_records: int = 0
    excluded: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)
    unparseable: list[str] = field(default_factory=list)
    rows: int = 0

    def add(self, row: dict[str, Any]) -> None:
        """Count one samples row."""
        self.rows += 1
        rid = str(row.get("record_id"))
        if rid in self.ids:
            self.duplicates.append(rid)
        self.ids.setdefault(rid, self.rows)
        status = row.get("status")
        if status == "excluded":
            (self.missing if row.get("excluded_reason") == MISSING_PREDICTION else self.excluded).append(rid)
            return
        self.judged_records += 1
        if row.get("output_failed") if "output_failed" in row else row.get("output") is None:
            self.failed.append(rid)
        if status == "unjudged":
            self.unjudged.append(rid)
        elif status == "unparseable":
            self.unparseable.append(rid)

    def differences(self, stored: dict[str, Any], scored: int | None = None) -> list[str]:
        """Every count or id list of results.json that the rows do not support, as one readable line each
        (``scored``: the records the recomputed metrics scored, checked against ``counts.scored``)."""
        out = [f"samples.jsonl: record {rid} has more than one row" for rid in self.duplicates[:5]]
        counts = stored.get("counts") or {}
        expected = {"judged_records": self.judged_records, "failed_outputs": len(self.failed),
                    "unjudged": len(self.unjudged), "unparseable": len(self.unparseable),
                    "excluded": len(self.excluded), "missing_predictions": len(self.missing)}
        for key, value in expected.items():
            if key in counts and counts[key] != value:
                out.append(f"counts.{key}: stored {counts[key]}, samples.jsonl has {value}")
        lists = {"failed_output_records": self.failed, "unjudged_records": self.unjudged,
                 "unparseable_records": self.unparseable, "missing_prediction_records": self.missing}
        for key, ids in lists.items():
            if key in stored and sorted(map(str, stored[key] or [])) != sorted(ids):
                out.append(f"{key}: results.json and samples.jsonl name different records "
                           f"({_diff(stored[key] or [], ids)})")
        excluded = stored.get("excluded_records")
        if isinstance(excluded, list):
            listed = [str(e.get("id")) if isinstance(e, dict) else str(e) for e in excluded]
            if sorted(listed) != sorted(self.excluded):
                out.append(f"excluded_records: results.json and samples.jsonl name different records "
                           f"({_diff(listed, self.excluded)})")
        if scored is not None and counts.get("scored") not in (None, scored):
            text = json.dumps(counts["scored"], sort_keys=True, default=str)
            out.append(f"counts.scored: stored {text if len(text) <= 80 else text[:77] + '...'}, samples.jsonl has {scored}")
        return out


def _diff(stored: list[Any], rows: list[str]) -> str:
    only_stored = sorted(set(map(str, stored)) - set(rows))
    only_rows = sorted(set(rows) - set(map(str, stored)))
    parts = []
    if only_stored:
        parts.append(f"only in results.json: {', '.join(only_stored[:3])}")
    if only_rows:
        parts.append(f"only in samples.jsonl: {', '.join(only_rows[:3])}")
    return "; ".join(parts) or "same records, different counts"
