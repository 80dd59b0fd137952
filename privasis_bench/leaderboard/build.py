"""``privasis-bench leaderboard build``: verified submissions -> privasis.json, README.md, index.html and viewers.

Only submissions that pass :func:`~privasis_bench.leaderboard.verify.verify_paths` enter the board. Each row is
drawn by its family (``FamilySpec.row``, from the verifier's recomputed metrics); a family that defines an
``overall`` row gets one per entry name from its tasks; the comparable groups and ranks are :mod:`.rows`'s; each
family adds its own parts of the pages (``FamilySpec.sections``: charts, published figures).

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

import datetime as _dt
import filecmp
import functools
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privasis_bench import __version__
from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import FileProblem
from privasis_bench.leaderboard.disclosure import board_disclosure, disclosure_markdown, entry_anchor, with_disclosure
from privasis_bench.leaderboard.downloads import DATA_DIR, entry_files, family_files, table_rows
from privasis_bench.leaderboard.family_api import BoardParts, board_families, family_named
from privasis_bench.leaderboard.history import activity
from privasis_bench.leaderboard.markdown import readme
from privasis_bench.leaderboard.page import SCRIPT, render_board, template
from privasis_bench.leaderboard.regenerate import REPORT_NAME as REGENERATE_REPORT
from privasis_bench.leaderboard.regenerate import board_mark, entry_key
from privasis_bench.leaderboard.rejudge_report import REPORT_NAME, apply_to_board, read_report
from privasis_bench.leaderboard.rows import rank_rows
from privasis_bench.leaderboard.verify import Verified, verify_paths
from privasis_bench.results.files import atomic_write_text, dumps_json

BOARD_FORMAT = "privasis-bench/leaderboard/2"
#: What a build writes; everything else in the board directory is carried over as it is.
GENERATED = ("privasis.json", "README.md", "index.html", "view", SCRIPT, DATA_DIR)
#: Files that live in the board directory without being generated (the rebuild check accepts only these).
#: The one seed script (every family's seeded entries from one list) and the committed re-judge report.
SEED_SCRIPT = "seed_board.sh"
KEPT = (SEED_SCRIPT, REPORT_NAME, REGENERATE_REPORT)
__all__ = ["BOARD_FORMAT", "BoardFiles", "board_parts", "overall_groups", "board_rows", "board_table", "build_board", "check_board"]


@dataclass(frozen=True)
class BoardFiles:
    """The files one build wrote (paths inside the board directory)."""

    json: Path
    markdown: Path
    html: Path
    viewers: list[Path]
    rejected: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (folder, problems) of each submission left off the board


def overall_groups(accepted: list[Verified]) -> list[list[Verified]]:
    """The task entries each ``overall`` row may pool: of a family that defines one, one entry name *and one track*
    (a verified overall row never pools a self-reported task of the same owner), two or more tasks, in task order."""
    groups: dict[tuple[str, str, str], list[Verified]] = {}
    for v in accepted:
        if (fam := family_named(v.family)).overall is not None:
            groups.setdefault((fam.name, str(v.submission["name"]), str(v.submission["track"])), []).append(v)
    return [sorted(entries, key=lambda v: str(v.submission["task"]["name"]))
            for _, entries in sorted(groups.items()) if len(entries) >= 2]


def board_rows(accepted: list[Verified], viewer_links: dict[Path, str],
               links: dict[Path, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One row per (entry, task) plus, for a family that defines one, an ``overall`` row per group of
    :func:`overall_groups`; grouped and ranked. ``links``: more fields per task folder (its files, history and
    downloads)."""
    rows = [{**family_row(v, viewer_links.get(v.path)), "outputs": getattr(v, "outputs_mark", "outputs as submitted"),
             **(links or {}).get(v.path, {})} for v in accepted]
    for entries in overall_groups(accepted):
        fam = family_named(entries[0].family)
        row = fam.call("overall", entries)
        if row is not None:
            rows.append({"family": fam.name, **row, "outputs": "outputs as submitted"})
    return rank_rows(rows)


def family_row(v: Verified, viewer: str | None) -> dict[str, Any]:
    """The board row of one verified task folder, as its family draws it (``FamilySpec.row``), with the model's
    arguments kept in its label, what kind of system it is, and why it is a degenerate end point (if it is)."""
    fam, task = family_named(v.family), v.submission["task"]["name"]
    row = {"family": fam.name, **fam.call("row", v, task, viewer), "about": system_description(v.submission.get("model"))}
    row["model"] = with_arguments(row.get("model"), v.submission.get("model"))
    row["degenerate"] = system_description(v.submission.get("model"), "degenerate")
    return row


def with_arguments(label: Any, model: Any) -> Any:
    """A model label with the spec's arguments the label leaves out (``presidio`` -> ``presidio:,nlp=none``), so
    two configurations of one tool never look alike on the board."""
    spec = model.get("spec") if isinstance(model, dict) else None
    args = spec.get("args") if isinstance(spec, dict) else None
    if not isinstance(label, str) or not isinstance(args, dict) or not args:
        return label
    text = ",".join(f"{k}={'none' if v is None else str(v).lower() if isinstance(v, bool) else v}"
                    for k, v in sorted(args.items()))
    head, sep, rest = label.partition(" ")
    if text in head:
        return label
    return head + ("," if ":" in head else ":,") + text + sep + rest


def board_parts(rows: list[dict[str, Any]]) -> BoardParts:
    """Every family's own parts of the board (``FamilySpec.sections``), merged in position order (families in
    registration order within one position)."""
    html: list[tuple[int, str]] = []
    markdown: list[tuple[int, str]] = []
    data: dict[str, Any] = {}
    for fam in board_families():
        if fam.sections is None:
            continue
        parts = fam.call("sections", rows)
        html += parts.html
        markdown += parts.markdown
        data.update(parts.data)
    return BoardParts(html=tuple(sorted(html, key=lambda p: p[0])), markdown=tuple(sorted(markdown, key=lambda p: p[0])),
                      data=data)


def system_description(model: Any, attribute: str = "description") -> str | None:
    """The one sentence the board shows about what kind of system an entry is (instruction-blind, rule-based,
    NER-based), for the shipped providers that have one (``Adapter.description``; with ``"degenerate"``, why it is
    a degenerate end point); None for any other."""
    spec = model.get("spec") if isinstance(model, dict) else None
    provider = spec.get("provider") if isinstance(spec, dict) else (spec.split(":", 1)[0] if isinstance(spec, str) else None)
    if not isinstance(provider, str):
        return None
    return _descriptions(attribute).get(provider.strip())


@functools.lru_cache(maxsize=4)
def _descriptions(attribute: str) -> dict[str, str]:
    from privasis_bench.adapters.registry import board_descriptions

    return board_descriptions(attribute)


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
                                           back="../index.html", metrics=v.recomputed)
        viewers[v.path] = page.relative_to(out).as_posix()
    date = build_date(accepted)
    history = activity(submissions)
    links, tables = _downloads(submissions, out, accepted, date, {e.folder for e in history.entries})
    rows = board_rows(accepted, viewers, links)
    parts = board_parts(rows)
    built = {"date": date, "harness_version": __version__, **({"rejudge": rejudge} if rejudge else {}),
             "downloads": family_files(out, tables)}
    atomic_write_text(out / SCRIPT, template(SCRIPT))
    board = {**parts.data, "format": BOARD_FORMAT, "built": built, "entries": rows, "rejected": rejected,
             "disclosure": board_disclosure(history, rows)}
    atomic_write_text(out / "privasis.json", dumps_json(board))
    atomic_write_text(out / "README.md", readme(rows, rejected, built, parts) + disclosure_markdown(board["disclosure"]))
    atomic_write_text(out / "index.html", with_disclosure(render_board(rows, built, parts), board["disclosure"]))
    return sorted(viewers.values())


def _downloads(submissions: Path, out: Path, accepted: list[Verified], date: str, known: set[str]
               ) -> tuple[dict[Path, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """Every accepted task folder's downloads written under ``out/data/``; the row fields that link to them, to its
    submitted files and to its own history (its line in the disclosure when git knows the folder, ``known``, else
    the disclosure section), and every family's table rows."""
    links: dict[Path, dict[str, Any]] = {}
    tables: dict[str, list[dict[str, Any]]] = {}
    for v in accepted:
        rel = _relative(v.path, submissions)
        entry = {"name": v.submission.get("name"), "track": v.submission.get("track")}
        offered = entry_files(v.path, entry, out, rel.replace("/", "__"), date)
        tables.setdefault(v.family, []).extend(table_rows(v.path, entry))
        links[v.path] = {"files": f"../{submissions.name}/{rel}/", "history": f"#{entry_anchor(rel)}" if rel in known else "#disclosure",
                         "downloads": offered.as_dict()}
    return links, tables


def _verified(submissions: Path, out_dir: Path) -> tuple[list[Verified], dict[str, Any] | None]:
    """Every submission verified, with the agreement of the board's committed re-judge report (if there is one),
    and that report's name and seed."""
    if not submissions.is_dir():
        raise PrivasisError(f"--submissions-dir {submissions}: not a directory")
    report_path = out_dir / REPORT_NAME
    report = read_report(report_path) if report_path.exists() or report_path.is_symlink() else None
    outcomes = verify_paths([submissions], progress=lambda line: print(line, file=sys.stderr, flush=True))
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
    staged = _stage_dir(out_dir)  # an unwritable --output is said before minutes of verification
    try:
        outcomes, rejudge = _verified(submissions, out_dir)
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

