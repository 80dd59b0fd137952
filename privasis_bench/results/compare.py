"""``privasis-bench compare``: a paired bootstrap of two runs on their common records, from files only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privasis_bench.results.files import ResultsError, common_tasks, load_results, load_sample_rows
from privasis_bench.tasks.family import FAMILIES, family_name, scorer_class


def compare_runs(a: str | Path, b: str | Path, *, bootstrap_samples: int | None = None, seed: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Paired bootstrap comparison of two runs, one per task in both, by their family's scorer's ``compare``."""
    out = []
    for name, da, db in common_tasks(a, b):
        stored = load_results(da)
        boot = (stored.get("metrics") or {}).get("bootstrap") or {}
        family, other = family_name(stored), family_name(load_results(db))
        cls = scorer_class(family) if family in FAMILIES else None
        if cls is None or other != family or not hasattr(cls, "compare"):
            raise ResultsError(f"{da} and {db}: cannot compare runs scored by {family!r} and {other!r}")
        out.append((name, cls.compare(load_sample_rows(da), load_sample_rows(db),
                                      samples=bootstrap_samples or boot.get("samples") or 1000,
                                      seed=boot.get("seed", 1234) if seed is None else seed,
                                      confidence=boot.get("confidence", 0.95))))
    return out
