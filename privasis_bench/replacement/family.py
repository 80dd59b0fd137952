"""What a leaderboard needs from the replacement-quality family, as pure functions (for the shared
submit/verify/build path to register; this package registers nothing itself).

- :func:`recompute`: a run's metrics again from its stored outputs and the data the verifier holds (the task's
  TAB documents and background file), with the same estimators as the run recorded: nothing is taken from the
  submission's own numbers.
- :func:`columns`: the board's columns (results key, header, which direction is better, whether it has a CI).
- :func:`row_view`: one board row from a run's ``results.json`` (numbers in percent, the estimator key).
- :func:`rank_groups`: runs grouped by estimator key; only runs inside one group may be ranked together.
"""

from __future__ import annotations

from typing import Any, Sequence

from privasis_bench.data.system_output import SystemOutput
from privasis_bench.tasks.config import TaskConfig

#: (results key, header, "higher"/"lower" is better, has a bootstrap interval)
COLUMNS: tuple[tuple[str, str, str, bool], ...] = (
    ("tps", "TPS", "higher", True),
    ("nmi", "NMI", "higher", False),
    ("trir", "TRIR", "lower", True),
    ("token_recall", "TAB token recall", "higher", True),
    ("recall_direct_entities", "TAB direct-entity recall", "higher", True),
    ("token_precision", "TAB token precision", "higher", True),
)


def columns() -> list[dict[str, Any]]:
    """The board columns of the family."""
    return [{"key": k, "header": h, "better": b, "ci": ci} for k, h, b, ci in COLUMNS]


def recompute(task: TaskConfig, rows: Sequence[dict[str, Any]], *, bootstrap_samples: int, seed: int,
              confidence: float, scorer: Any = None) -> dict[str, Any]:
    """Metrics from a run's stored outputs (``samples.jsonl`` rows: ``output``, and ``masked_spans`` with
    ``span_source: system`` when the sanitizer reported them), scored afresh against the task's data."""
    from privasis_bench.replacement.scorer import ReplacementScorer

    scorer = scorer or ReplacementScorer(task)
    scorer.records()
    outputs = {}
    for row in rows:
        spans = row.get("masked_spans") if row.get("span_source") == "system" else None
        error = None if row.get("scored") else (row.get("error") or "failed")
        outputs[str(row["id"])] = SystemOutput(text=row.get("output"), spans=spans, error=error)
    metrics, _ = scorer.score(outputs, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence)
    return metrics


def _pct(value: Any) -> float | None:
    return None if value is None else round(100 * float(value), 2)


def row_view(results: dict[str, Any]) -> dict[str, Any]:
    """One board row: model, task, every column in percent (with its interval) and the estimator key."""
    metrics = results.get("metrics") or {}
    ci = metrics.get("ci") or {}
    model = results.get("model") or {}
    row: dict[str, Any] = {"model": model.get("label") or model.get("key"), "model_key": model.get("key"),
                           "task": (results.get("task") or {}).get("name"),
                           "estimator_key": metrics.get("estimator_key"),
                           "documents": metrics.get("scored_documents")}
    for key, _, _, has_ci in COLUMNS:
        row[key] = _pct(metrics.get(key))
        if has_ci and key in ci:
            row[f"{key}_ci"] = [_pct(ci[key].get("low")), _pct(ci[key].get("high"))]
    return row


def rank_groups(results: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Runs by estimator key (numbers from different estimators are never ranked together)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for res in results:
        groups.setdefault(str((res.get("metrics") or {}).get("estimator_key")), []).append(res)
    return groups
