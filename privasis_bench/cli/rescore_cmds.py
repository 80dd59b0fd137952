"""``privasis-bench rescore`` and ``compare``: the numbers of finished runs, recomputed or set side by side (no model
call)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.cli.options import SCORING_OPTIONS
from privasis_bench.fsutil import ensure_dir
from privasis_bench.pipeline.lock import run_read_locks, task_dir_lock
from privasis_bench.results.compare import compare_runs
from privasis_bench.results.files import atomic_write_text, dumps_json
from privasis_bench.results.rescore import rescore_run
from privasis_bench.results.tables import compare_table

console = Console()
SeedOpt = SCORING_OPTIONS["seed"][1]


def rescore(
    run_dir: Path = typer.Argument(..., help="A run directory (or one task directory) written by run/evaluate."),
    bootstrap_samples: Optional[int] = SCORING_OPTIONS["bootstrap_samples"][1],
    seed: Optional[int] = SeedOpt,
    write: bool = typer.Option(False, "--write", help="Store the recomputed metrics in results.json."),
) -> None:
    """Recompute every metric from samples.jsonl (no model call), check it against results.json, and re-derive every verdict."""
    from contextlib import ExitStack

    from privasis_bench.results.files import task_dirs
    from privasis_bench.results.rescore import refuse_submission_folders

    with ExitStack() as locks:
        if write:  # like run: nobody else may write these task directories meanwhile
            refuse_submission_folders(task_dirs(run_dir))
            for task_dir in task_dirs(run_dir):
                locks.enter_context(task_dir_lock(task_dir, "rescore --write"))
        else:  # nobody may change them while they are read
            locks.enter_context(run_read_locks([run_dir], "rescore"))
        outcomes = rescore_run(run_dir, bootstrap_samples=bootstrap_samples, seed=seed, write=write)
    from privasis_bench.cli.outcome_report import print_reports

    print_reports([o.results for o in outcomes])
    for o in outcomes:
        _say_rescored(o)
    if not all(o.ok for o in outcomes):
        raise typer.Exit(1)


def _say_rescored(o: Any) -> None:
    """What rescore found in one task directory: the metrics, then each kind of problem under its own heading."""
    def lines(items: Any, prefix: str = "") -> None:
        for line in items:
            console.print(f"  {prefix}{escape(str(line))}", highlight=False, soft_wrap=True)

    where, same = escape(str(o.task_dir)), o.metrics_match
    status = "match" if same else ("were recomputed with new settings, unlike" if same is None else "DIFFER from")
    console.print(f"{where}: recomputed metrics {status} results.json", highlight=False, soft_wrap=True)
    lines([d for d in o.differences if d not in o.count_differences])
    if o.count_differences:
        console.print(f"{where}: counts or record lists of results.json disagree with samples.jsonl", highlight=False, soft_wrap=True)
        lines(o.count_differences)
    if o.setting_problems:
        console.print(f"{where}: results.json claims scoring_preset {escape(str(o.results.get('scoring_preset')))} "
                      "but records other settings", highlight=False, soft_wrap=True)
        lines(o.setting_problems)
    if o.row_problems:
        console.print(f"{where}: samples.jsonl holds rows the task does not allow (judge answers, cut flags or document ids)",
                      highlight=False, soft_wrap=True)
        lines(o.row_problems)
    lines(o.contradictions, "contradiction: ")


def compare(
    a: Path = typer.Argument(..., help="First run directory (or task directory / results.json)."),
    b: Path = typer.Argument(..., help="Second run directory."),
    bootstrap_samples: Optional[int] = typer.Option(None, "--bootstrap-samples", min=1, max=100_000, help="Resamples (default: A's setting)."),
    seed: Optional[int] = SeedOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the comparison as JSON to this file."),
) -> None:
    """Paired bootstrap comparison of two runs on their common records, per common task."""
    if json_out is not None:  # an unwritable --json path is said before the work, not after
        ensure_dir(json_out.parent, "--json")
    with run_read_locks([a, b], "compare"):
        comparisons = compare_runs(a, b, bootstrap_samples=bootstrap_samples, seed=seed)
    for name, comparison in comparisons:
        console.print(compare_table(name, comparison))
    if json_out is not None:
        payload = {"a": str(a), "b": str(b), "tasks": {name: c for name, c in comparisons}}
        atomic_write_text(json_out, dumps_json(payload))
        console.print(f"  -> {escape(str(json_out))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``rescore`` and ``compare``."""
    app.command("rescore")(rescore)
    app.command("compare")(compare)
