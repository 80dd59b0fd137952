"""Console tables (rich): the metrics summary of one or more results files and a paired comparison."""

from __future__ import annotations

from typing import Any


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"



def summary_table(results: list[dict[str, Any]]):
    """A rich Table: one row per metric, one column per results file (value with its 95% CI)."""
    from rich.table import Table

    from privasis_bench.protocol.metrics import HEADLINE_METRICS, METRIC_LABELS

    table = Table(title="privasis-bench results (%, 95% bootstrap CI)", title_justify="left")
    table.add_column("metric", no_wrap=True)
    for res in results:
        header = "\n".join((
            str(res.get("task", {}).get("name", "?")),
            f"model: {res.get('model', {}).get('label', '?')}"
            + (" (non-rankable: reads gold labels)" if res.get("model", {}).get("rankable") is False else ""),
            f"judge: {res.get('judge', {}).get('label', '?')}",
        ))
        table.add_column(header, justify="right")
    for key in HEADLINE_METRICS:
        cells = []
        for res in results:
            metrics = res.get("metrics", {})
            value, ci = metrics.get("headline", {}).get(key), metrics.get("ci", {}).get(key) or {}
            band = f" [{_pct(ci['low'])}, {_pct(ci['high'])}]" if ci.get("low") is not None else ""
            cells.append(_pct(value) + band)
        table.add_row(METRIC_LABELS[key], *cells)
    count_rows = (("scored records", "scored"), ("excluded (no keep attr.)", "excluded"),
                  ("failed model outputs", "failed_outputs"), ("unjudged records", "unjudged"),
                  ("off-label judge answers", "off_label"))
    for label, key in count_rows:
        table.add_row(label, *(str(res.get("counts", {}).get(key, 0)) for res in results))
    return table



def compare_table(name: str, comparison: dict[str, Any]):
    """A rich Table for a paired comparison (A, B, A-B with CI and p-value per metric)."""
    from rich.table import Table

    from privasis_bench.protocol.metrics import METRIC_LABELS

    boot = comparison.get("bootstrap", {})
    table = Table(
        title=f"{name}: paired bootstrap on {comparison['common_records']} common records "
        f"({boot.get('samples')} samples, seed {boot.get('seed')})"
    )
    for col in ("metric", "A", "B", "A-B", "CI", "p"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for key, row in comparison["metrics"].items():
        ci = f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]" if row["ci_low"] is not None else "-"
        p = "-" if row["p_value"] is None else ("<0.001" if row["p_value"] < 0.001 else f"{row['p_value']:.3f}")
        diff = "-" if row["diff"] is None else f"{row['diff']:+.2f}"
        table.add_row(METRIC_LABELS.get(key, key), _pct(row["a"]), _pct(row["b"]), diff, ci, p)
    return table
