"""Command-line options shared by several commands (one definition each)."""

from __future__ import annotations

from typing import List, Optional

import typer

TasksOption = typer.Option(..., "--tasks", "-t", help="Task, group or tag names, or YAML files/directories (comma-separated or repeated).")
IncludePathOption = typer.Option(None, "--include-path", help="Extra directory or YAML file with task definitions.")
DataFilesOption = typer.Option(None, "--data-files", help="Read the task's rows from these local jsonl/json/parquet files instead of its configured source.")
LimitOption = typer.Option(None, "--limit", min=1, help="Use only the first N rows of each task.")
SkipInvalidOption = typer.Option(False, "--skip-invalid", help="Skip malformed rows (reported and counted) instead of stopping.")


def split_multi(values: Optional[List[str]]) -> list[str]:
    """Flatten repeated and comma-separated option values."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]
