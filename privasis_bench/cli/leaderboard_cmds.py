"""``submit``, ``leaderboard verify|build`` and ``view``: publishing results."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.verify import verify_paths
from privasis_bench.leaderboard.viewer import write_viewer
from privasis_bench.results.files import task_dirs

console = Console()
board = typer.Typer(help="Verify submissions and build the leaderboard.", no_args_is_help=True)


def _say(text: str) -> None:
    console.print(escape(text), highlight=False, soft_wrap=True)


def submit(
    run_dir: Path = typer.Argument(..., help="A run directory (or one task directory) written by run/evaluate."),
    name: str = typer.Option(..., "--name", help="ORG/MODEL: the entry's name; the folder is submissions/ORG__MODEL/."),
    track: str = typer.Option("self-reported", "--track", help="verified (the board's pinned judge and prompts) or self-reported."),
    reference: bool = typer.Option(False, "--reference", help="A reference row: allowed to read gold labels, never ranked."),
    label: Optional[str] = typer.Option(None, "--label", help="A short note shown with the entry (e.g. 'sample task')."),
    root: Path = typer.Option(Path("submissions"), "--submissions-dir", help="Where submissions live."),
) -> None:
    """Copy a finished run into submissions/ with its provenance (submission.json)."""
    for folder in submit_run(run_dir, name, track=track, reference=reference, label=label, root=root):
        _say(f"submitted -> {folder}")


@board.command("verify")
def verify(
    paths: Optional[List[Path]] = typer.Argument(None, help="Submission folders (default: submissions/)."),
) -> None:
    """Recompute and re-derive every submitted number and verdict; non-zero exit on any problem."""
    outcomes = verify_paths(paths or [Path("submissions")])
    if not outcomes:
        _say("no submission found (a submission folder holds submission.json)")
        raise typer.Exit(1)
    for v in outcomes:
        _say(f"{'ok  ' if v.ok else 'FAIL'} {v.path}")
        for problem in v.problems:
            _say(f"  {problem}")
    failed = sum(not v.ok for v in outcomes)
    _say(f"{len(outcomes) - failed} verified, {failed} rejected")
    if failed:
        raise typer.Exit(1)


@board.command("build")
def build(
    submissions: Path = typer.Option(Path("submissions"), "--submissions-dir", help="Where submissions live."),
    out_dir: Path = typer.Option(Path("leaderboards"), "--output", "-o", help="Where the board is written."),
) -> None:
    """Aggregate verified submissions into privasis.json, README.md, index.html and per-run viewer pages."""
    files = build_board(submissions, out_dir)
    for path in (files.json, files.markdown, files.html, *files.viewers):
        _say(f"  -> {path}")


def view(
    run_dir: Path = typer.Argument(..., help="A run directory (or one task directory)."),
    out_dir: Optional[Path] = typer.Option(None, "--output", "-o", help="Directory for the pages (default: each task directory)."),
) -> None:
    """Write a static page per task to browse a run record by record (view.html)."""
    for task_dir in task_dirs(run_dir):
        out = (out_dir / f"{task_dir.name}.html") if out_dir else task_dir / "view.html"
        _say(f"  -> {write_viewer(task_dir, out)}")


def register(app: typer.Typer) -> None:
    """Add ``submit``, ``leaderboard`` (verify, build) and ``view``."""
    app.command("submit")(submit)
    app.command("view")(view)
    app.add_typer(board, name="leaderboard")
