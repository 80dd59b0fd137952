"""Re-deriving a TAB run's samples rows from their outputs, for ``rescore`` (a forged row is found even when the
pooled numbers were left to match)."""

from __future__ import annotations

import json
from typing import Any

#: Row fields a span scorer derives from the output and the document (a run of shipped data is checked on them).
DERIVED_ROW_FIELDS = ("scored", "masked_spans", "counts", "by_type", "missed", "measures")


def rederived_row_problems(stored: dict[str, Any], rows: list[dict[str, Any]], scorer_class: Any) -> list[str]:
    """For a run of ``scorer_class`` on data shipped with the package: every samples row whose derived fields (masked
    spans, counts, measures) are not what the scorer derives again from the row's output and the document, so an
    edited row is found even when the pooled numbers were left to match. Other runs are not re-derived."""
    from privasis_bench.data.system_output import SystemOutput
    from privasis_bench.errors import PrivasisError
    from privasis_bench.tasks.registry import resolve_tasks

    source = str((stored.get("dataset") or {}).get("source") or "")
    name = (stored.get("task") or {}).get("name")
    if (stored.get("scorer") or {}).get("name") != scorer_class.name or not source.startswith("privasis_bench:tasks/") \
            or not isinstance(name, str):
        return []
    try:
        scorer = scorer_class(resolve_tasks([name])[0])
        scorer.records()
    except PrivasisError:
        return []
    outputs = {}
    for row in rows:
        text, error = row.get("output"), row.get("error")
        spans = row.get("masked_spans") if row.get("span_source") == "system" else None
        if spans is not None and not (isinstance(spans, list) and all(
                isinstance(p, list) and len(p) == 2 and all(type(x) is int for x in p) for p in spans)):
            return [f"samples.jsonl document {str(row.get('id'))[:80]!r}: masked_spans is not a list of [start, end] "
                    "integer pairs"]
        if row.get("left_out") is None:
            outputs[str(row.get("id"))] = SystemOutput(text=text if isinstance(text, str) else None,
                                                       error=error if isinstance(error, str) else None, spans=spans)
    boot = (stored.get("metrics") or {}).get("bootstrap") or {}
    failed_as_empty = (stored.get("checks") or {}).get("failed_outputs") == "scored_as_empty"
    _, derived = scorer.score(outputs, bootstrap_samples=1, seed=int(boot.get("seed") or 0), confidence=0.95,
                              failed_as_empty=failed_as_empty)
    by_id = {r["id"]: r for r in derived}
    problems = []
    for row in rows:
        again = by_id.get(str(row.get("id")))
        if again is None or row.get("left_out") is not None:
            continue
        wrong = [f for f in DERIVED_ROW_FIELDS if f in again and json.loads(json.dumps(again[f])) != row.get(f)]
        if wrong:
            problems.append(f"samples.jsonl document {row['id'][:80]!r}: {', '.join(wrong)} not what its output and "
                            "the document give (re-derived by the scorer)")
    return problems
