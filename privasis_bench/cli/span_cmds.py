"""The default family report of ``run``, ``evaluate`` and ``rescore`` (``FamilySpec.report``): one table of measures
per task."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

console = Console()


def print_span_results(results: list[dict[str, Any]]) -> None:
    """The default family report: one table per task's results, each measure with its bootstrap interval."""
    from rich.table import Table

    for res in results:
        metrics = res["metrics"]
        table = Table(title=f"{res['task']['name']} ({res['scorer']['name']} scorer, 95% bootstrap CI) — "
                            f"model: {res['model']['label']}", title_justify="left")
        table.add_column("measure", no_wrap=True)
        table.add_column("value", justify="right")
        for key, value in metrics.items():
            if isinstance(value, float):
                ci = metrics.get("ci", {}).get(key)
                bounded = isinstance(ci, dict) and None not in (ci.get("low"), ci.get("high"))  # none without bootstrap
                band = f" [{ci['low']:.3f}, {ci['high']:.3f}]" if bounded else ""
                table.add_row(key, f"{value:.3f}{band}")
        for etype, value in metrics.get("token_recall_by_type", {}).items():
            table.add_row(f"token_recall {etype}", f"{value:.3f}")
        for key, value in metrics.items():
            if value is None and key in metrics.get("official_rounded", {}):
                table.add_row(key, "nothing to count")
        table.add_row("scored documents", str(metrics.get("scored_documents")))
        if res["counts"].get("left_out"):
            table.add_row("left out (not in the predictions file)", str(res["counts"]["left_out"]))
        table.add_row("failed outputs", str(res["counts"]["failed_outputs"]))
        console.print(table)
        for line in res.get("notices") or []:
            console.print(f"[yellow]{escape(res['task']['name'])}: {escape(line)}[/]", highlight=False, soft_wrap=True)
