"""``privasis-bench rescore``: recompute every metric from ``samples.jsonl`` and check it against ``results.json``.

No model is called: everything comes from the two files a run wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privasis_bench.protocol.metrics import compute_metrics, scored
from privasis_bench.protocol.rederive import Contradiction, judge_enabled, rederive_rows
from privasis_bench.results.files import ResultsError, load_results, load_sample_rows, task_dirs, verdicts_from_rows, write_results


@dataclass
class Rescored:
    """One task directory after rescoring. ``matches`` is None when settings were overridden.

    ``contradictions``: verdicts in samples.jsonl that its recorded outputs and judge answers do not support.
    """

    task_dir: Path
    results: dict[str, Any]
    matches: bool | None
    contradictions: list[Contradiction]



def rescore_task(task_dir: Path, *, bootstrap_samples: int | None = None, seed: int | None = None, write: bool = False) -> Rescored:
    """Recompute the metrics of one task directory from its samples file."""
    stored = load_results(task_dir)
    old = stored.get("metrics") or {}
    boot = old.get("bootstrap") or {}
    if "samples" not in boot or "seed" not in boot:
        raise ResultsError(f"{task_dir}: results.json has no bootstrap settings to rescore with")
    rows = load_sample_rows(task_dir)
    contradictions = rederive_rows(rows, parse_mode=stored.get("parse_mode") or "official", judge_enabled=judge_enabled(stored))
    if write and contradictions:
        raise ResultsError(f"{task_dir}: refusing to write results.json: {len(contradictions)} verdict(s) contradict "
                           f"what samples.jsonl records, first: {contradictions[0]}")
    verdicts = scored(verdicts_from_rows(rows))
    overridden = (bootstrap_samples is not None and bootstrap_samples != boot["samples"]) or (seed is not None and seed != boot["seed"])
    metrics = compute_metrics(
        verdicts,
        bootstrap_samples=boot["samples"] if bootstrap_samples is None else bootstrap_samples,
        seed=boot["seed"] if seed is None else seed,
        confidence=boot.get("confidence", 0.95),
        top_failed=old.get("top_failed_limit", 20),
    )
    metrics = json.loads(json.dumps(metrics, allow_nan=False))  # the same round trip the file went through
    matches = None if overridden else metrics == old
    results = {k: v for k, v in stored.items() if k != "format"}
    results["metrics"] = metrics
    if write:
        write_results(Path(task_dir) / "results.json", results)
    return Rescored(Path(task_dir), results, matches, contradictions)



def rescore_run(run_dir: str | Path, **kwargs: Any) -> list[Rescored]:
    """Rescore every task directory of a run."""
    return [rescore_task(d, **kwargs) for d in task_dirs(run_dir)]
