"""Compact per-record tallies: everything the metrics need, a few integers per record.

Metrics and bootstrap CIs are computed from a :class:`MetricTallies`, which can be filled one verdict at a time
(``add``) while verdicts stream past, so scoring 100K records never holds 100K verdict objects. Attribute-name
counters and category indexes are kept for the breakdowns (paper Tables 5, 6 and 10).
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from privasis_bench.protocol.verdicts import LEAK_TIERS, RecordVerdict

#: Per-record integer columns, in this order.
COUNT_COLUMNS: tuple[str, ...] = ("targets_total", "targets_judged", "sanitized", "keep_total", "keep_judged", "retained")


@dataclass
class MetricTallies:
    """Per-record counts (one entry per scored record, in order) plus the counters of the breakdowns."""

    counts: dict[str, array] = field(default_factory=lambda: {c: array("i") for c in COUNT_COLUMNS})
    category_index: array = field(default_factory=lambda: array("i"))
    categories: list[str] = field(default_factory=list)
    record_ids: list[str] = field(default_factory=list)
    leak_tiers: Counter = field(default_factory=Counter)
    leaked_names: Counter = field(default_factory=Counter)
    seen_target_names: Counter = field(default_factory=Counter)
    lost_keep_names: Counter = field(default_factory=Counter)
    seen_keep_names: Counter = field(default_factory=Counter)
    _category_pos: dict[str, int] = field(default_factory=dict, repr=False)

    @classmethod
    def from_verdicts(cls, verdicts: Iterable[RecordVerdict]) -> "MetricTallies":
        """Tally every verdict of an iterable (which may be a generator)."""
        tallies = cls()
        for rv in verdicts:
            tallies.add(rv)
        return tallies

    def __len__(self) -> int:
        return len(self.record_ids)

    def add(self, rv: RecordVerdict) -> None:
        """Count one scored record."""
        judged_targets = [t for t in rv.targets if t.tier != "null"]
        judged_keep = [k for k in rv.keep if k.via != "null"]
        row = (len(rv.targets), len(judged_targets), sum(t.tier == "sanitized" for t in judged_targets),
               len(rv.keep), len(judged_keep), sum(k.retained is True for k in judged_keep))
        for name, value in zip(COUNT_COLUMNS, row):
            self.counts[name].append(value)
        pos = self._category_pos.get(rv.category)
        if pos is None:
            pos = self._category_pos[rv.category] = len(self.categories)
            self.categories.append(rv.category)
        self.category_index.append(pos)
        self.record_ids.append(rv.record_id)
        for t in rv.targets:
            if t.tier in LEAK_TIERS:
                self.leak_tiers[t.tier] += 1
                self.leaked_names[t.name] += 1
            if t.tier != "null":
                self.seen_target_names[t.name] += 1
        for k in rv.keep:
            if k.retained is False:
                self.lost_keep_names[k.name] += 1
            if k.via != "null":
                self.seen_keep_names[k.name] += 1

    def arrays(self, order: list[int] | None = None) -> dict[str, np.ndarray]:
        """The count columns as float arrays plus the completeness flags (optionally in another record order)."""
        out = {name: np.asarray(col, dtype=float) for name, col in self.counts.items()}
        if order is not None:
            out = {name: col[order] for name, col in out.items()}
        out["san_complete"] = ((out["targets_judged"] > 0) & (out["sanitized"] == out["targets_judged"])).astype(float)
        out["ret_complete"] = ((out["keep_judged"] > 0) & (out["retained"] == out["keep_judged"])).astype(float)
        return out

    def full_success(self) -> np.ndarray:
        """Per record: complete sanitization and complete retention."""
        a = self.arrays()
        return (a["san_complete"] * a["ret_complete"]).astype(bool)

    def record_categories(self) -> list[str]:
        """The category of each record, in order."""
        return [self.categories[i] for i in self.category_index]
