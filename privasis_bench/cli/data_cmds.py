"""``privasis-bench data inspect``: what a task's records look like before any model runs."""

from __future__ import annotations

import json
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from privasis_bench.cli.options import (
    DataFilesOption,
    IncludePathOption,
    LimitOption,
    SkipInvalidOption,
    TasksOption,
    check_data_files,
    split_multi,
)
from privasis_bench.data.loading import load_records, with_data_files
from privasis_bench.data.stats import dataset_stats
from privasis_bench.pipeline.scorers import span_scorer
from privasis_bench.tasks.registry import resolve_tasks

data_app = typer.Typer(help="Inspect benchmark data.", no_args_is_help=True)
console = Console()


@data_app.command("inspect")
def inspect(
    tasks: List[str] = TasksOption,
    include_path: Optional[List[str]] = IncludePathOption,
    data_files: Optional[List[str]] = DataFilesOption,
    limit: Optional[int] = LimitOption,
    skip_invalid: bool = SkipInvalidOption,
    as_json: bool = typer.Option(False, "--json", help="Print the statistics as JSON."),
) -> None:
    """Load each task's records and print their statistics."""
    check_data_files(data_files)
    for task in resolve_tasks(split_multi(tasks), include_path):
        if data_files:
            task = with_data_files(task, split_multi(data_files))
        scorer = span_scorer(task)
        if scorer is not None:  # TAB and other span-scored tasks: their own schema, their own statistics
            if not task.dataset.data_files:
                task = with_data_files(task, scorer.data_files())
                scorer = span_scorer(task)
            scorer.records(limit=limit)
            source, stats, invalid = ", ".join(task.dataset.data_files or []), scorer.stats(), []
        else:
            loaded = load_records(task, skip_invalid=skip_invalid, limit=limit)
            source, stats, invalid = loaded.source, dataset_stats(loaded), loaded.invalid
        if as_json:
            typer.echo(json.dumps({"task": task.task, **stats}, indent=2, ensure_ascii=False))
            continue
        table = Table(title=escape(f"{task.task}  ({source})"), show_header=True)
        table.add_column("statistic")
        table.add_column("value", justify="right")
        for key, value in stats.items():
            if isinstance(value, dict):
                value = ", ".join(f"{k}: {v}" for k, v in value.items()) or "-"
            table.add_row(key.replace("_", " "), str(value))
        console.print(table)
        for row in invalid:
            console.print(f"[yellow]skipped[/] row {row.row_number}: {escape(row.message)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group."""
    app.add_typer(data_app, name="data")
