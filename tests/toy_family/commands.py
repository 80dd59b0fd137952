"""The toy family's own command (``FamilySpec.commands``): ``privasis-bench toy-guesses RUN``."""

from __future__ import annotations

from pathlib import Path

import typer

from privasis_bench.results.files import load_sample_rows, task_dirs


def toy_guesses(run_dir: Path = typer.Argument(..., help="A toy run directory (or its task directory).")) -> None:
    """Print the attacker's guess for each note of a toy run."""
    for task_dir in task_dirs(run_dir):
        for row in load_sample_rows(task_dir):
            shown = "protected" if row.get("protected") else "named" if row.get("scored") else "unscored"
            typer.echo(f"{task_dir.name} {row.get('id')}: {row.get('guess')!r} ({shown})")
