"""``privasis-bench export-tab-masks``: a TAB run's masked spans in TAB's own masked-output format, so that TAB's
official ``evaluation.py`` can score the same run.

The TAB family's own command (declared in :mod:`privasis_bench.tab.family`): a command-line module, so it sits in the
CLI layer and may read run folders; nothing in the package imports it."""

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
    from privasis_bench.tab.scorer import TabScorer

    found = [d for d in task_dirs(run_dir) if (load_results(d).get("scorer") or {}).get("name") == TabScorer.name]
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
    where = f"{found[0]}/samples.jsonl"
    lengths = _shipped_lengths(load_results(found[0]))
    spans: dict[str, list[list[int]]] = {}
    first_row: dict[str, int] = {}
    for n, row in enumerate(rows, start=1):
        if not row.get("scored"):
            continue
        masked = row.get("masked_spans")
        if not isinstance(row.get("id"), str) or not isinstance(masked, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(type(x) is int for x in p) for p in masked):
            raise PrivasisError(f"{where}: row {n} has no id or no masked_spans list of [start, end] integer pairs (not a TAB run?)")
        doc = row["id"]
        if doc in first_row:
            raise PrivasisError(f"{where}: row {n}: document {doc[:80]!r} appears a second time (first in row "
                                f"{first_row[doc]}); a run scores each document once")
        first_row[doc] = n
        _check_spans(where, n, doc, masked, None if lengths is None else lengths.get(doc))
        spans[doc] = masked
    if not spans:
        raise PrivasisError(f"{where}: no scored document to export (every row failed or was left out); nothing written")
    ensure_dir(output.parent, "--output")
    TabScorer.write_masks(output, spans)
    left = sum(1 for r in rows if not r.get("scored"))
    note = f"; {left} unscored document(s) left out, as TAB's script leaves out what the file omits" if left else ""
    if lengths is None:
        note += "; the run's data is not shipped, so span ends were not checked against the document texts"
    console.print(f"wrote {len(spans)} document(s) to {escape(str(output))}{escape(note)}", highlight=False)


def _check_spans(where: str, n: int, doc: str, masked: list[list[int]], length: int | None) -> None:
    """A span a run could have written: start >= 0, end >= start, and (text length known) end within the text."""
    for start, end in masked:
        if start < 0 or end < start or (length is not None and end > length):
            within = f" within the document's {length:,} characters" if length is not None else ""
            raise PrivasisError(f"{where}: row {n} (document {doc[:80]!r}): masked span [{start}, {end}] is not a span "
                                f"of the text (0 <= start <= end{within}); the file was edited or is not a TAB run")


def _shipped_lengths(results: dict) -> dict[str, int] | None:
    """Text length per document when the run's data is shipped with the package, else None (not checkable)."""
    from privasis_bench.tab.scorer import TabScorer
    from privasis_bench.tasks.paths import BUILTIN_PREFIX
    from privasis_bench.tasks.registry import resolve_tasks

    source = str((results.get("dataset") or {}).get("source") or "")
    name = (results.get("task") or {}).get("name")
    if not source.startswith(BUILTIN_PREFIX) or not isinstance(name, str):
        return None
    try:
        return {r.id: len(r.text) for r in TabScorer(resolve_tasks([name])[0]).records()}
    except PrivasisError:
        return None

