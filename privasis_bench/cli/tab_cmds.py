"""``privasis-bench export-tab-masks``: a TAB run's masked spans in TAB's own masked-output format, so that TAB's
official ``evaluation.py`` can score the same run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir
from privasis_bench.results.files import load_results, load_sample_rows, task_dirs

console = Console()


def export_tab_masks(
    run_dir: Path = typer.Argument(..., help="A run directory (or one task directory) of a TAB task written by run/evaluate."),
    output: Path = typer.Option(..., "--output", "-o", help="The masked-output JSON file to write ({doc_id: [[start, end], ...]})."),
    task: Optional[str] = typer.Option(None, "--task", "-t", help="The TAB task to export when the run holds several."),
) -> None:
    """Write a TAB run's masked spans as TAB's masked-output file, for its official evaluation.py."""
    from privasis_bench.tasks.family import scorer_class

    found = [d for d in task_dirs(run_dir) if (load_results(d).get("scorer") or {}).get("name") == "tab"]
    if task is not None:
        found = [d for d in found if load_results(d)["task"]["name"] == task]
    if not found:
        raise PrivasisError(f"{run_dir}: no TAB task{f' {task!r}' if task else ''} in this run (export-tab-masks takes "
                            "a run of tab_sample, tab_dev, tab_test or another task with scorer: tab)")
    if len(found) > 1:
        names = ", ".join(load_results(d)["task"]["name"] for d in found)
        raise PrivasisError(f"{run_dir}: holds several TAB tasks ({names}); choose one with --task")
    if output.is_dir():
        raise PrivasisError(f"--output {output}: is a directory; give the JSON file to write")
    rows = load_sample_rows(found[0])
    spans: dict[str, list[list[int]]] = {}
    for n, row in enumerate(rows, start=1):
        if not row.get("scored"):
            continue
        masked = row.get("masked_spans")
        if not isinstance(row.get("id"), str) or not isinstance(masked, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(type(x) is int for x in p) for p in masked):
            raise PrivasisError(f"{found[0]}/samples.jsonl: row {n} has no id or no masked_spans list of [start, end] integer pairs (not a TAB run?)")
        spans[row["id"]] = masked
    ensure_dir(output.parent, "--output")
    scorer_class("tab").write_masks(output, spans)  # the family registry: cli names no scorer package
    left = sum(1 for r in rows if not r.get("scored"))
    note = f"; {left} unscored document(s) left out, as TAB's script leaves out what the file omits" if left else ""
    console.print(f"wrote {len(spans)} document(s) to {escape(str(output))}{escape(note)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``export-tab-masks`` command."""
    app.command("export-tab-masks")(export_tab_masks)
