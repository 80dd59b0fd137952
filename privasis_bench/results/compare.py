"""``privasis-bench compare``: a paired bootstrap of two runs on their common records, from files only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privasis_bench.protocol.metrics import paired_bootstrap, scored
from privasis_bench.results.files import ResultsError, common_tasks, load_results, load_sample_rows, verdicts_from_rows
from privasis_bench.tasks.family import FAMILIES, scorer_class


def _compare_span_runs(stored: dict[str, Any], a: Path, b: Path, boot: dict[str, Any], samples: int | None,
                       seed: int | None) -> dict[str, Any]:
    name = str(stored["scorer"].get("name"))
    other = (load_results(b).get("scorer") or {}).get("name")
    cls = scorer_class(name) if name in FAMILIES else None
    if cls is None or other != name or not hasattr(cls, "compare"):
        raise ResultsError(f"{a} and {b}: cannot compare runs scored by {name!r} and {other!r}")
    return cls.compare(load_sample_rows(a), load_sample_rows(b), samples=samples or boot.get("samples") or 1000,
                       seed=boot.get("seed", 1234) if seed is None else seed, confidence=boot.get("confidence", 0.95))


def compare_runs(a: str | Path, b: str | Path, *, bootstrap_samples: int | None = None, seed: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Paired bootstrap comparison of two runs, one entry per task present in both."""
    out = []
    for name, da, db in common_tasks(a, b):
        stored = load_results(da)
        boot = (stored.get("metrics") or {}).get("bootstrap") or {}
        if stored.get("scorer"):  # a span scorer's runs (TAB): its own paired bootstrap over documents
            out.append((name, _compare_span_runs(stored, da, db, boot, bootstrap_samples, seed)))
            continue
        va = scored(verdicts_from_rows(load_sample_rows(da)))
        vb = scored(verdicts_from_rows(load_sample_rows(db)))
        comparison = paired_bootstrap(
            va, vb,
            samples=bootstrap_samples or boot.get("samples") or 1000,
            seed=boot.get("seed", 1234) if seed is None else seed,
            confidence=boot.get("confidence", 0.95),
        )
        out.append((name, comparison))
    return out
