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
    Opts,
    SkipInvalidOption,
    TasksOption,
    check_data_files,
    split_multi,
)
from privasis_bench.pipeline.scorers import setup_task
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
        setup = setup_task(task, Opts(limit=limit, skip_invalid=skip_invalid, data_files=data_files), all_records=True)
        task, stats, invalid = setup.task, setup.scorer.stats(), setup.records.invalid
        source = setup.records.source
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
