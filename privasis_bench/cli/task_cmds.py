"""``privasis-bench tasks list|show``."""

from __future__ import annotations

from typing import List, Optional

import typer
import yaml
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from privasis_bench.cli.options import IncludePathOption
from privasis_bench.tasks.registry import build_index, load_task

tasks_app = typer.Typer(help="List and inspect task definitions.", no_args_is_help=True)
console = Console()


@tasks_app.command("list")
def list_tasks(include_path: Optional[List[str]] = IncludePathOption) -> None:
    """List every task and group (built-in plus --include-path)."""
    index = build_index(include_path)
    table = Table(title="privasis-bench tasks")
    table.add_column("name", no_wrap=True)
    for column in ("kind", "version", "tags / members", "data source"):
        table.add_column(column, overflow="fold")
    for name, task in sorted(index.tasks.items()):
        table.add_row(name, "task", task.version, ", ".join(task.tag), escape(data_source(task)))
    for name, group in sorted(index.groups.items()):
        table.add_row(name, "group", group.version, ", ".join(group.task), "")
    console.print(table)


@tasks_app.command("show")
def show_task(name: str = typer.Argument(..., help="Task name or YAML path."), include_path: Optional[List[str]] = IncludePathOption) -> None:
    """Print a task's fully resolved config (includes merged, paths absolute) and its config hash."""
    task = load_task(name, include_path)
    resolved = task.model_dump(mode="json")
    resolved["config_hash"] = task.config_hash()
    typer.echo(yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True).rstrip())


def data_source(task: object) -> str:
    """Where a task's data comes from: its span scorer says when it has its own source (TAB: a GitHub file)."""
    from privasis_bench.tasks.family import scorer_class

    cls = scorer_class(task.scorer)  # type: ignore[attr-defined]
    describe = getattr(cls, "data_source", None)
    return describe(task) if describe is not None else task.dataset.describe()  # type: ignore[attr-defined]


def register(app: typer.Typer) -> None:
    """Add the ``tasks`` command group."""
    app.add_typer(tasks_app, name="tasks")
