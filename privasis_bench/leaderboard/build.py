"""``privasis-bench leaderboard build``: verified submissions -> privasis.json, README.md, index.html and viewers.

Only submissions that pass :func:`~privasis_bench.leaderboard.verify.verify_paths` enter the board; the rows,
their comparable groups and ranks are :mod:`.rows`'s. "overall" (only for an entry with more than one task) pools
the records of its tasks and bootstraps again with the submitted settings.

The output is a pure function of the submissions: no wall clock (the build date is the newest accepted submission's
date), no absolute path, sorted everywhere, so CI can rebuild the board and compare it with the committed one
(:func:`check_board`). All files are written into a staging directory beside the board, which then replaces the
board's generated files in one swap: a build that fails leaves the previous board untouched. Files in the board
directory that the build does not generate (such as ``seed_sample_board.sh``) are carried over.

Re-judge agreement comes from the committed report ``rejudge.json`` in the board directory (an input the build
keeps, written by ``leaderboard verify --report``; see :mod:`.rejudge_report`): each entry's agreement goes into
``privasis.json``, ``README.md`` and ``index.html``, each with the seed it was re-judged with. Without that file no
entry shows one, and every entry says why it was not re-judged.
"""

from __future__ import annotations

import functools

import datetime as _dt
import filecmp
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from privasis_bench import __version__
from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import FileProblem
from privasis_bench.leaderboard.markdown import readme
from privasis_bench.leaderboard.page import render_board
from privasis_bench.leaderboard.regenerate import REPORT_NAME as REGENERATE_REPORT
from privasis_bench.leaderboard.regenerate import board_mark, entry_key
from privasis_bench.leaderboard.rejudge_report import REPORT_NAME, apply_to_board, read_report
from privasis_bench.leaderboard.rows import HEADLINE, OVERALL, entry_row, pooled_row, rank_rows
from privasis_bench.leaderboard.verify import Verified, verify_paths
from privasis_bench.leaderboard.families import family_named
from privasis_bench.tasks.scorers import DEFAULT_SCORER
from privasis_bench.protocol.metrics import compute_metrics
from privasis_bench.protocol.verdicts import SCORED_STATUSES
from privasis_bench.results.files import atomic_write_text, dumps_json, load_sample_rows, verdicts_from_rows

BOARD_FORMAT = "privasis-bench/leaderboard/2"
#: What a build writes; everything else in the board directory is carried over as it is.
GENERATED = ("privasis.json", "README.md", "index.html", "view")
#: Files that live in the board directory without being generated (the rebuild check accepts only these).
KEPT = ("seed_sample_board.sh", "seed_tab_board.sh", "seed_deid_tools.sh", "seed_replacement_board.sh", REPORT_NAME,
        REGENERATE_REPORT)
__all__ = ["BOARD_FORMAT", "HEADLINE", "BoardFiles", "board_rows", "board_table", "build_board", "check_board"]


@dataclass(frozen=True)
class BoardFiles:
    """The files one build wrote (paths inside the board directory)."""

    json: Path
    markdown: Path
    html: Path
    viewers: list[Path]
    rejected: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (folder, problems) of each submission left off the board


def paper_reported() -> dict[str, Any]:
    """The paper's Table 4 numbers (shown only in their own labelled section)."""
    return json.loads(resources.files("privasis_bench.leaderboard").joinpath("paper_table4.json").read_text("utf-8"))


def _overall(entries: list[Verified]) -> dict[str, Any]:
    verdicts = [vd for v in entries for vd in verdicts_from_rows(load_sample_rows(v.path)) if vd.status in SCORED_STATUSES]
    boot = entries[0].results["metrics"]["bootstrap"]
    metrics = compute_metrics(verdicts, bootstrap_samples=boot["samples"], seed=boot["seed"],
                              confidence=boot["confidence"], top_failed=0)
    return json.loads(json.dumps(metrics, allow_nan=False))


def overall_groups(accepted: list[Verified]) -> list[list[Verified]]:
    """The task entries each ``overall`` row pools: Privasis tasks of one name *and one track* (a verified overall
    never pools a self-reported task of the same owner), only where there are two or more, each in task order."""
    by_name: dict[tuple[str, str], list[Verified]] = {}
    for v in (v for v in accepted if v.family == DEFAULT_SCORER):
        by_name.setdefault((str(v.submission["name"]), str(v.submission["track"])), []).append(v)
    return [sorted(entries, key=lambda v: v.submission["task"]["name"])  # with one task, "overall" would repeat it
            for _, entries in sorted(by_name.items()) if len(entries) >= 2]


def board_rows(accepted: list[Verified], viewer_links: dict[Path, str]) -> list[dict[str, Any]]:
    """One row per (entry, task) plus one ``overall`` row per entry with several tasks, grouped and ranked."""
    rows = [{**family_row(v, viewer_links.get(v.path)), "outputs": getattr(v, "outputs_mark", "outputs as submitted")}
            for v in accepted]
    for entries in overall_groups(accepted):
        parts = [entry_row(v, v.submission["task"]["name"], v.results["metrics"], None) for v in entries]
        rows.append({**pooled_row(parts, entry_row(entries[0], OVERALL, _overall(entries), None)),
                     "outputs": "outputs as submitted"})
    return rank_rows(rows)


def family_row(v: Verified, viewer: str | None) -> dict[str, Any]:
    """The board row of one verified task folder, as its family draws it (see :mod:`.families`)."""
    fam, task = family_named(v.family), v.submission["task"]["name"]
    row = (entry_row(v, task, v.results["metrics"], viewer) if fam.recompute is None
           else fam.call("row", v, task, viewer))
    return {"family": fam.name, **row, "about": system_description(v.submission.get("model"))}


def system_description(model: Any) -> str | None:
    """The one sentence the board shows about what kind of system an entry is (instruction-blind, rule-based,
    NER-based), for the shipped providers that have one (``Adapter.description``); None for any other."""
    spec = model.get("spec") if isinstance(model, dict) else None
    provider = spec.get("provider") if isinstance(spec, dict) else (spec.split(":", 1)[0] if isinstance(spec, str) else None)
    if not isinstance(provider, str):
        return None
    return _descriptions().get(provider.strip())


@functools.lru_cache(maxsize=1)
def _descriptions() -> dict[str, str]:
    from privasis_bench.adapters.registry import board_descriptions

    return board_descriptions()


def board_table(accepted: list[Verified], viewer_links: dict[Path, str]) -> pd.DataFrame:
    """:func:`board_rows` as a table (for analysis; the board files are written from the rows)."""
    return pd.DataFrame(board_rows(accepted, viewer_links))


def build_date(accepted: list[Verified]) -> str:
    """The newest accepted submission's date (``YYYY-MM-DD``, UTC): a build date that needs no clock."""
    dates = []
    for v in accepted:
        try:
            when = _dt.datetime.fromisoformat(str((v.submission.get("dates") or {}).get("submitted")))
        except ValueError:
            continue
        if when.tzinfo is not None:
            dates.append(when.astimezone(_dt.timezone.utc).date().isoformat())
    return max(dates) if dates else "never (no accepted submission)"


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.name


def _write_board(submissions: Path, out: Path, outcomes: list[Verified],
                 rejudge: dict[str, Any] | None = None) -> list[str]:
    """Write every generated file under ``out`` (a fresh directory); returns the viewer pages' relative paths.
    ``rejudge``: the committed report's name and seed, if any."""
    accepted = [v for v in outcomes if v.ok]
    rejected = [{"path": _relative(v.path, submissions), "problems": len(v.problems)} for v in outcomes if not v.ok]
    viewers: dict[Path, str] = {}
    for v in accepted:
        rel = Path("view") / _relative(v.path, submissions).replace("/", "__")
        page = family_named(v.family).call("viewer", v.path, out / rel.with_suffix(".html"),
                                           title=f"{v.submission['name']} on {v.submission['task']['name']}",
                                           back="../index.html")
        viewers[v.path] = page.relative_to(out).as_posix()
    rows = board_rows(accepted, viewers)
    built = {"date": build_date(accepted), "harness_version": __version__, **({"rejudge": rejudge} if rejudge else {})}
    board = {"format": BOARD_FORMAT, "built": built, "entries": rows, "rejected": rejected,
             "paper_reported": paper_reported()}
    atomic_write_text(out / "privasis.json", dumps_json(board))
    atomic_write_text(out / "README.md", readme(rows, rejected, built))
    atomic_write_text(out / "index.html", render_board(rows, board["paper_reported"], built))
    return sorted(viewers.values())


def _verified(submissions: Path, out_dir: Path) -> tuple[list[Verified], dict[str, Any] | None]:
    """Every submission verified, with the agreement of the board's committed re-judge report (if there is one),
    and that report's name and seed."""
    if not submissions.is_dir():
        raise PrivasisError(f"--submissions-dir {submissions}: not a directory")
    report_path = out_dir / REPORT_NAME
    report = read_report(report_path) if report_path.exists() or report_path.is_symlink() else None
    outcomes = verify_paths([submissions])
    if not outcomes:
        raise PrivasisError(f"no submission found under {submissions} (a submission folder holds submission.json; "
                            "publish a run with `privasis-bench submit RUN --name ORG/MODEL`)")
    apply_to_board(report, outcomes)  # also says, per entry without an agreement, why it was not re-judged
    for v in outcomes:  # the committed regeneration report's mark (see regenerate.py)
        v.outputs_mark = board_mark(out_dir, entry_key(v.path))  # type: ignore[attr-defined]
    if report is None:
        return outcomes, None
    return outcomes, {"report": REPORT_NAME}  # each agreement carries the seed it was re-judged with


def _stage_dir(out_dir: Path) -> Path:
    if out_dir.exists() and not out_dir.is_dir():
        raise FileProblem(f"{out_dir}: is a file; --output must be a directory")
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.build-", dir=out_dir.parent))
    except (FileExistsError, NotADirectoryError):
        raise FileProblem(f"{out_dir}: cannot write it, a part of its directory path is a file") from None
    except OSError as exc:
        raise FileProblem(f"{out_dir}: cannot create a staging directory beside it ({exc.strerror or exc})") from None


def _swap(staged: Path, out_dir: Path) -> None:
    """Carry the board directory's other files into ``staged``, then put ``staged`` in its place."""
    if out_dir.is_dir():
        for item in sorted(out_dir.iterdir()):
            if item.name not in GENERATED and not item.name.startswith(f".{out_dir.name}."):
                (shutil.copytree if item.is_dir() else shutil.copy2)(item, staged / item.name)
        old = staged.with_name(staged.name + ".old")
        os.rename(out_dir, old)
        try:
            os.rename(staged, out_dir)
        except OSError:
            os.rename(old, out_dir)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staged, out_dir)


def build_board(submissions: str | Path = "submissions", out_dir: str | Path = "leaderboards") -> BoardFiles:
    """Verify every submission, then write the board files and one viewer page per accepted submission (all or none)."""
    submissions, out_dir = Path(submissions), Path(out_dir)
    outcomes, rejudge = _verified(submissions, out_dir)
    staged = _stage_dir(out_dir)
    try:
        viewers = _write_board(submissions, staged, outcomes, rejudge)
        _swap(staged, out_dir)
    except OSError as exc:
        raise FileProblem(f"{out_dir}: cannot write the board ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return BoardFiles(out_dir / "privasis.json", out_dir / "README.md", out_dir / "index.html",
                      [out_dir / p for p in viewers],
                      tuple((str(v.path), tuple(v.problems)) for v in outcomes if not v.ok))


def _files(directory: Path) -> set[str]:
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()} if directory.is_dir() else set()


def check_board(submissions: str | Path = "submissions", out_dir: str | Path = "leaderboards") -> list[str]:
    """Rebuild the board into a temporary directory and list every way ``out_dir`` differs (empty: identical)."""
    submissions, out_dir = Path(submissions), Path(out_dir)
    outcomes, rejudge = _verified(submissions, out_dir)
    with tempfile.TemporaryDirectory(prefix="privasis-board-") as tmp:
        fresh = Path(tmp) / "board"
        fresh.mkdir()
        _write_board(submissions, fresh, outcomes, rejudge)
        built, committed = _files(fresh), _files(out_dir) - set(KEPT)
        problems = [f"{out_dir / name}: missing (the rebuild writes it)" for name in sorted(built - committed)]
        problems += [f"{out_dir / name}: not written by the build (remove it)" for name in sorted(committed - built)]
        problems += [f"{out_dir / name}: differs from the rebuild" for name in sorted(built & committed)
                     if not filecmp.cmp(fresh / name, out_dir / name, shallow=False)]
    return problems

