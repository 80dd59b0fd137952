"""``privasis-bench models ...``: which model providers exist and whether they can run here."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

models_app = typer.Typer(help="Model providers (adapters): built-in and installed plugins.", no_args_is_help=True)


@models_app.command("list")
def list_models() -> None:
    """Show every provider: where it comes from, the pip extra it needs, and whether that is installed."""
    from privasis_bench.adapters.registry import list_providers

    table = Table(title="model providers (spec: provider:model,k=v)")
    for column in ("provider", "source", "extra to install", "installed", "rankable", "description"):
        table.add_column(column, overflow="fold")
    for row in list_providers():
        source = row.source + (f" ({row.distribution})" if row.distribution else "")
        extra = f"privasis-bench[{row.extra}]" if row.extra and row.source == "builtin" else (row.extra or "-")
        installed = "yes" if row.installed else "[red]no[/]"
        rankable = "-" if row.rankable is None else ("yes" if row.rankable else "no")
        description = escape(row.description) if row.error is None else f"[red]broken: {escape(row.error)}[/]"
        table.add_row(escape(row.name), escape(source), escape(extra), installed, rankable, description)
    console = Console()
    (console if console.is_terminal else Console(width=160)).print(table)


def register(app: typer.Typer) -> None:
    """Add the ``models`` command group to the app."""
    app.add_typer(models_app, name="models")
