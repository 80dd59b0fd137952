"""``submit``, ``leaderboard verify|build`` and ``view``: publishing results."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.loading import load_records
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.rejudge import rejudge
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.verify import Verified, verify_paths
from privasis_bench.leaderboard.viewer import write_viewer
from privasis_bench.pipeline.run import EngineOptions
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.results.files import load_sample_rows, task_dirs
from privasis_bench.tasks.registry import load_task

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
    rejudge_k: int = typer.Option(0, "--rejudge", min=0, help="Also re-ask the judge on K seeded judged attributes per submission."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Judge spec for --rejudge (required with it)."),
    judge_args: Optional[str] = typer.Option(None, "--judge-args", help="Extra judge arguments k=v,k2=v2 for --rejudge."),
    seed: int = typer.Option(0, "--seed", help="Seed choosing the attributes to re-judge."),
) -> None:
    """Recompute and re-derive every submitted number and verdict; non-zero exit on any problem."""
    if rejudge_k and not judge:
        raise PrivasisError("--rejudge needs --judge SPEC (the judge to re-ask)")
    outcomes = verify_paths(paths or [Path("submissions")])
    if not outcomes:
        _say("no submission found (a submission folder holds submission.json)")
        raise typer.Exit(1)
    for v in outcomes:
        _say(f"{'ok  ' if v.ok else 'FAIL'} {v.path}")
        for problem in v.problems:
            _say(f"  {problem}")
        if rejudge_k and v.ok and judge:
            _say(f"  {_rejudged(v, rejudge_k, judge, judge_args, seed)}")
    failed = sum(not v.ok for v in outcomes)
    _say(f"{len(outcomes) - failed} verified, {failed} rejected")
    if failed:
        raise typer.Exit(1)


def _rejudged(v: Verified, k: int, judge: str, judge_args: Optional[str], seed: int) -> str:
    spec = ModelSpec.parse(judge, judge_args)
    engine = EngineOptions(cache=None, progress=False).engine(spec, "judge")
    try:
        task = load_task(v.results["task"]["name"])
        records = {r.id: r for r in load_records(task, limit=v.results["dataset"].get("limit")).records}
        got = rejudge(load_sample_rows(v.path), records, v.results, k=k, seed=seed,
                      runner=lambda reqs: engine.run(reqs, desc="rejudge"), prompts=JudgePrompts.load(task.judge.templates))
    finally:
        engine.close()
    lines = [f"rejudge with {spec.key()}: {got.agreed}/{got.asked} agree"
             + ("" if got.rate is None else f" ({got.rate:.1f}%)")] + [f"  {d}" for d in got.disagreements]
    return "\n  ".join(lines)


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
