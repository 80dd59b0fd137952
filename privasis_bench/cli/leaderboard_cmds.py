"""``submit``, ``leaderboard verify|build`` and ``view``: publishing results."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.cli.rejudging import JudgeSession, rejudged
from privasis_bench.cli.rejudging import check_report as check_report_numbers
from privasis_bench.cli.value_checks import check_label
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.build import build_board, check_board
from privasis_bench.leaderboard.changed import base_branch_as, changes_since
from privasis_bench.leaderboard.data_source import DATA_DIR_ENV
from privasis_bench.leaderboard.family_api import family_named, family_of
from privasis_bench.leaderboard.naming import check_owner
from privasis_bench.leaderboard.rejudge import sample_size
from privasis_bench.leaderboard.rejudge_report import ReportError, merged, read_raw, read_report
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.verify import verify_paths, verify_report
from privasis_bench.pipeline.lock import run_read_locks
from privasis_bench.results.files import atomic_write_text, dumps_json, load_results, task_dirs

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
    replace: bool = typer.Option(False, "--replace", help="Overwrite an entry already submitted under --name."),
    owner: Optional[str] = typer.Option(None, "--owner", help="Who owns the name (a GitHub handle; default: the ORG part of --name). Every task under one name must have the same owner; CI compares it with the pull request's author."),
) -> None:
    """Copy a finished run into submissions/ with its provenance (submission.json)."""
    check_label("--label", label)  # published with the entry: never a key or a local path
    check_owner(owner)
    with run_read_locks([run_dir], "submit"):  # never a run that is being written: no writer starts meanwhile
        folders = submit_run(run_dir, name, track=track, reference=reference, label=label, root=root, replace=replace,
                             owner=owner)
    for folder in folders:
        _say(f"submitted -> {folder}")


@board.command("verify")
def verify(
    paths: Optional[List[Path]] = typer.Argument(None, help="Submission folders or a directory of them (default: submissions/)."),
    rejudge_n: Optional[int] = typer.Option(
        None, "--rejudge", min=0, max=100000,
        help="Re-ask the judge about N judged attributes per submission (default: the error model's 90 with the pinned "
             "judge on verified-track entries, 0 for self-reported ones)."),
    max_disagreements: int = typer.Option(
        0, "--max-disagreements", min=0, max=20,
        help="Excuse up to this many disagreements on which the judge itself is unstable (asked twice more, it answers "
             "differently); a disagreement it reproduces every time always rejects (docs/publishing.md)."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Judge spec for re-judging self-reported entries (verified ones use the pinned judge)."),
    judge_args: Optional[str] = typer.Option(None, "--judge-args", help="Extra judge arguments k=v,k2=v2 (e.g. base_url): the verifier's own, never a submission's."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, max=2**32 - 1,
                                       help="Seed choosing the attributes to re-judge (default: fresh and printed; pass it to repeat a check)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=f"Local copies of hub task data (default: ${DATA_DIR_ENV} or data/verify)."),
    report: Optional[Path] = typer.Option(
        None, "--report",
        help="Also write every entry's outcome and board facts (agreement, partial, ...) as JSON. An existing report "
             "(leaderboards/rejudge.json) is updated: the entries verified now replace theirs, the others are kept. "
             "Never written over an existing file when an entry or the --check-report check fails."),
    regenerate_k: int = typer.Option(
        0, "--regenerate", min=0, max=1000,
        help="Re-run the submitted model on K seeded records where the verifier can (pinned local llama.cpp models, "
             "greedy, compared exactly; or an endpoint of --regenerate-endpoints, compared by its rule): "
             "'outputs reproduced (k/K)' or 'outputs as submitted'."),
    regenerate_report: Optional[Path] = typer.Option(
        None, "--regenerate-report", help="With --regenerate: write each entry's outcome as JSON "
                                          "(leaderboards/regenerate.json is the board's; entries not "
                                          "regenerated now are kept)."),
    regenerate_endpoints: Optional[Path] = typer.Option(
        None, "--regenerate-endpoints",
        help="With --regenerate: the maintainer's YAML file mapping a submitted model spec or label to an endpoint "
             "to call and its comparison rule (exact, or similarity >= a threshold); keys only by env var name."),
    check_report: Optional[Path] = typer.Option(
        None, "--check-report",
        help="Also check a committed re-judge report (leaderboards/rejudge.json): re-ask each of its entries with the "
             "report's own seed and sample size, and fail naming the entry when a committed number differs."),
    changed_since: Optional[str] = typer.Option(
        None, "--changed-since", metavar="REF",
        help="Pull-request mode: re-judge only the entries new or changed against git commit REF (and those whose "
             "--check-report row changed; every entry when a judge input changed); every entry still gets the cheap "
             "checks and ownership (REF is also the base branch for ownership). REF must be a commit whose whole "
             "board was fully verified (docs/publishing.md)."),
    judge_replicas: int = typer.Option(
        1, "--judge-replicas", min=1, max=16,
        help="Load N copies of an in-process llama.cpp judge (one thread each) and ask them at once: about N times "
             "faster on N free cores, the same answers (each copy processes every prompt whole)."),
) -> None:
    """Recompute and re-derive every submitted number and verdict, re-judge a sample; non-zero exit on any problem."""
    committed = read_report(check_report) if check_report is not None else None  # a malformed report fails first
    with base_branch_as(changed_since):
        outcomes = verify_paths(paths or [Path("submissions")], data_dir=data_dir)
        changes = (changes_since(changed_since, [v.path for v in outcomes if v.submission], check_report)
                   if changed_since else None)
    full = {v.path for v in outcomes if changes is None or changes.full(v.path, v.submission)}
    if changes is not None:
        _say(changes.summary(len(outcomes), len(full)))
    if not outcomes:
        raise PrivasisError(f"no submission found under {', '.join(str(p) for p in paths or ['submissions'])} "
                            "(a submission folder holds submission.json; publish a run with `privasis-bench submit`)")
    seed = secrets.randbits(32) if seed is None else seed
    endpoints = None  # the maintainer's endpoints file is read before any model call (its errors come first)
    if regenerate_endpoints is not None:
        from privasis_bench.leaderboard.regen_endpoints import load_endpoints

        endpoints = load_endpoints(regenerate_endpoints)
    _say(f"rejudge seed {seed} (repeat this exact check with --seed {seed})")
    if rejudge_n is not None and 0 < rejudge_n < sample_size():
        _say(f"note: --rejudge {rejudge_n} is below the error model's {sample_size()}: an entry with 5% of its "
             "decisions forged is no longer rejected with probability >= 99%")
    try:  # --report merges into an existing report: a bad one fails first, before any judge call
        previous = read_raw(report) if report is not None and report.exists() else None
    except ReportError as exc:
        raise ReportError(f"{exc} (--report updates an existing report; remove the file to write a new one)") from None
    checkable = {v.path for v in outcomes if v.ok and not v.custom and v.path in full}
    session = JudgeSession(judge_args, data_dir, replicas=judge_replicas)
    try:
        for v in outcomes:
            verified_track = v.submission.get("track") == "verified"
            n = rejudge_n if rejudge_n is not None else (sample_size() if verified_track else 0)
            note = None if v.path in full else f"not re-judged: unchanged since {changed_since} (cheap checks only)"
            n = n if v.path in full else 0
            rejudged_family = family_named(v.family).rejudge is not None  # only families with a re-judge re-ask
            if n and v.ok and not v.custom and rejudged_family:
                _say(f"rejudge {v.path}: asking the {' and '.join(family_named(v.family).roles) or 'model'} about up to "
                     f"{n} judged attributes")
                if not verified_track and not judge:
                    raise PrivasisError("--rejudge on a self-reported submission needs --judge SPEC (the judge to re-ask)")
                note = rejudged(v, session, n=n, judge=None if verified_track else judge, seed=seed,
                                max_disagreements=max_disagreements)
            _say(f"{'ok  ' if v.ok else 'FAIL'} {v.path}")
            for problem in v.problems:
                _say(f"  {problem}")
            if note:
                _say(f"  {note}")
        checked = (check_report_numbers(committed, outcomes, session, checkable=checkable, judge=judge)
                   if committed is not None else None)
    finally:
        session.close()
    if regenerate_k:  # issue 50.6: outputs reproduced where the verifier can run the model (regenerate.py)
        from privasis_bench.leaderboard.regenerate import regenerate_outcomes, write_report

        regenerated = regenerate_outcomes(outcomes, k=regenerate_k, seed=seed, data_dir=data_dir, endpoints=endpoints)
        for r in regenerated:
            _say(f"regenerate {r.entry}: {r.mark()}" + (f" ({r.reason})" if r.reason else ""))
        if regenerate_report is not None:
            write_report(regenerate_report, regenerated)
    failed = sum(not v.ok for v in outcomes)
    _say(f"{len(outcomes) - failed} verified, {failed} rejected")
    if checked is not None:
        for line in checked.problems:
            _say(f"FAIL {line}")
        _say(f"{check_report}: {checked.checked} committed re-judge(s) re-asked with their own seeds, "
             f"{len(checked.problems)} problem(s), {checked.calls} judge call(s) beyond the fresh-seed check")
    bad = failed or (checked is not None and checked.problems)
    if report is not None:
        if bad and report.exists():  # a failed check never replaces what is committed
            _say(f"{report}: not written (an entry or the report check failed); the existing file is kept")
        else:
            written = [v for v in outcomes if v.path in full]  # an entry not re-judged now keeps its committed row
            atomic_write_text(report, dumps_json(merged(previous, verify_report(written, seed))))
            _say(f"-> {report}" + (" (updated: entries verified now replaced, others kept)" if previous else ""))
    if bad:
        raise typer.Exit(1)


@board.command("build")
def build(
    submissions: Path = typer.Option(Path("submissions"), "--submissions-dir", help="Where submissions live."),
    out_dir: Path = typer.Option(Path("leaderboards"), "--output", "-o", help="Where the board is written."),
    check: bool = typer.Option(False, "--check", help="Write nothing: rebuild into a temporary directory and exit 1 "
                               "when --output differs from the rebuild (CI runs this)."),
) -> None:
    """Aggregate verified submissions into privasis.json, README.md, index.html and per-run viewer pages."""
    if check:
        problems = check_board(submissions, out_dir)
        for line in problems:
            _say(line)
        if problems:
            _say(f"{out_dir} differs from a rebuild: run `privasis-bench leaderboard build -o {out_dir}` and commit it")
            raise typer.Exit(1)
        _say(f"{out_dir} equals a rebuild")
        return
    files = build_board(submissions, out_dir)
    for path in (files.json, files.markdown, files.html, *files.viewers):
        _say(f"  -> {path}")
    for folder, problems in files.rejected:
        _say(f"left off the board: {folder}: {problems[0] if problems else 'rejected by verification'}"
             + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""))
    if files.rejected:
        _say(f"{len(files.rejected)} submission(s) failed verification and are not on the board; see "
             "`privasis-bench leaderboard verify` for every problem, fix or remove them, then build again")
        raise typer.Exit(1)


@board.command("pin-data")
def pin_data(
    task: str = typer.Argument(..., help="A shipped hub task (e.g. privasis_vanilla)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=f"Where the local copy is (default: ${DATA_DIR_ENV} or data/verify)."),
) -> None:
    """Print the pinned_data.json entry (record-id hash, content hash, record digests) of a checked local copy."""
    from privasis_bench.leaderboard.data_source import local_pin
    from privasis_bench.leaderboard.task_source import shipped_task

    print(dumps_json({task: local_pin(shipped_task(task), data_dir)}), end="")


def view(
    run_dir: Path = typer.Argument(..., help="A run directory (or one task directory)."),
    out_dir: Optional[Path] = typer.Option(None, "--output", "-o", help="Directory for the pages (default: each task directory)."),
) -> None:
    """Write a static page per task to browse a run record by record (view.html)."""
    with run_read_locks([run_dir], "view"):
        for task_dir in task_dirs(run_dir):
            out = (out_dir / f"{task_dir.name}.html") if out_dir else task_dir / "view.html"
            family = family_of(load_results(task_dir))  # each family draws its own page
            _say(f"  -> {family.call('viewer', task_dir, out)}")


def register(app: typer.Typer) -> None:
    """Add ``submit``, ``leaderboard`` (verify, build) and ``view``."""
    app.command("submit")(submit)
    app.command("view")(view)
    app.add_typer(board, name="leaderboard")
