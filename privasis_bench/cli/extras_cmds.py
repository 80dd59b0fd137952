"""Measurements beyond the paper's Table 4: ``agreement``, ``near-verbatim`` and ``linkage``.

None of them changes ``results.json``'s ``metrics`` or ``samples.jsonl``: each reads a run's files and prints
its own, clearly labelled numbers (``near-verbatim`` and ``linkage`` also write ``<task>/<name>.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from privasis_bench.results.agreement import agreement_runs
from privasis_bench.results.files import atomic_write_text, dumps_json
from privasis_bench.results.tables import compare_table

console = Console()


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _agreement_table(name: str, report: dict[str, Any]) -> Table:
    table = Table(title=f"{name}: judge agreement on {report['common_records']} common records"
                  + (f" ({report['outputs_differ']} with different outputs!)" if report["outputs_differ"] else ""),
                  title_justify="left")
    for col in ("decision", "pairs", "agreement %", "Cohen's kappa"):
        table.add_column(col, justify="left" if col == "decision" else "right")
    for key, label in (("leak_tier", "leak tier (direct/inference/proximity/sanitized)"),
                       ("leaked", "leaked or not"), ("retention", "retention (retained or not)")):
        part = report[key]
        table.add_row(label, str(part["decisions"]), _num(part["agreement"]), "undefined" if part["kappa"] is None else f"{part['kappa']:.3f}")
    return table


def _disagreement_table(name: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=f"{name}: attributes with the most disagreement", title_justify="left")
    for col in ("attribute", "kind", "disagreements", "decisions", "rate %"):
        table.add_column(col, justify="left" if col in ("attribute", "kind") else "right")
    for r in rows:
        table.add_row(escape(r["attribute"]), r["kind"], str(r["disagreements"]), str(r["decisions"]),
                      _num(r["disagreement_rate"]))
    return table


def agreement(
    a: Path = typer.Argument(..., help="First run directory (or task directory)."),
    b: Path = typer.Argument(..., help="Second run directory: the same outputs judged differently."),
    top: int = typer.Option(10, "--top", min=1, help="How many most-disagreed attributes to list."),
    bootstrap_samples: Optional[int] = typer.Option(None, "--bootstrap-samples", min=1, help="Resamples (default: A's setting)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Bootstrap seed (default: A's)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the report as JSON to this file."),
) -> None:
    """Judge agreement of two runs: per-decision agreement and Cohen's kappa, metric deltas, most-disagreed attributes."""
    reports = agreement_runs(a, b, top=top, bootstrap_samples=bootstrap_samples, seed=seed)
    for name, report in reports:
        console.print(_agreement_table(name, report))
        if report["most_disagreed"]:
            console.print(_disagreement_table(name, report["most_disagreed"]))
        console.print("  kappa is undefined when both judgings use one and the same label throughout", highlight=False)
        console.print(compare_table(name, report["metric_deltas"]))
    if json_out is not None:
        atomic_write_text(json_out, dumps_json({"a": str(a), "b": str(b), "tasks": dict(reports)}))
        console.print(f"  -> {escape(str(json_out))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``agreement``."""
    app.command("agreement")(agreement)
