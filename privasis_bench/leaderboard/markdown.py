"""The board as Markdown (``leaderboards/README.md``, what the repository host shows), every cell escaped.

A submitter controls names and labels, so no cell may break the table or inject markup: every cell, header and
heading goes through :func:`.escaping.md_cell` (line breaks become spaces, and every character Markdown or HTML
gives a meaning to is backslash-escaped, which CommonMark and GitHub render as the character).
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from privasis_bench.leaderboard.crosstask import crosstask_markdown
from privasis_bench.leaderboard.escaping import fixed, md_cell, md_table
from privasis_bench.leaderboard.family_api import BoardParts, board_families, family_named
from privasis_bench.leaderboard.rejudge_report import REPORT_NAME, summary
from privasis_bench.leaderboard.rows import group_title

__all__ = ["md_cell", "md_table", "markdown_board", "readme", "rank_text", "header", "ranked_by", "board_intro"]


def ranked_by(board: Any) -> str:
    """What a family's tables are ranked by, in words (one key: its column; several: each with its direction)."""
    columns = dict(board.columns)
    if len(board.rank_by) == 1 and board.rank_by[0][1] == "higher":
        return columns[board.rank_by[0][0]]
    return " then ".join(f"{columns[k]} ({b} is better)" for k, b in board.rank_by)


def _ordering(board: Any) -> str:
    if board.frontier:
        columns = dict(board.columns)
        return (f"no single rank: the Pareto frontier of {' against '.join(columns[k] for k, _ in board.rank_by[:2])}"
                f" ({', '.join(f'{b} {columns[k]} is better' for k, b in board.rank_by[:2])})")
    return f"ranked by {ranked_by(board)}"


def board_intro(entries: list[dict[str, Any]]) -> str:
    """The board's opening paragraph, derived from the family registry: every family with entries, what its numbers
    are and how its tables are ordered, then the registered families that have no entry yet."""
    present = {e.get("family") for e in entries}
    shown = [f for f in board_families() if f.name in present]
    empty = [f.title for f in board_families() if f.name not in present]
    parts = [f"{f.title}: {f.board.unit.split(';')[0]}; {_ordering(f.board)}" for f in shown]
    text = (f"Task families on this board ({len(shown)}): " + ". ".join(parts) + "." if shown
            else "No task family has an entry yet.")
    if empty:
        text += f" Registered, no entry yet: {', '.join(empty)}."
    return text


def rank_text(e: dict[str, Any]) -> str:
    """A row's rank as shown: ``–`` unranked, ``2`` alone, ``1=`` shared with a tie on the headline."""
    rank = e.get("rank")
    return "–" if rank is None else f"{rank}{'=' if e.get('tied') else ''}"


def _row_cells(e: dict[str, Any]) -> list[Any]:
    notes = [e.get("label"), "reference (reads gold labels, never ranked)" if e.get("gold_reading") or e.get("reference")
             else None, f"degenerate baseline, never ranked: {e['degenerate']}" if e.get("degenerate") else None,
             f"dominated by {', '.join(str(n) for n in e['dominated_by'])}" if e.get("dominated_by") else None,
             "partial run" if e.get("partial") else None, *e.get("tolerated", [])]
    agreement = e.get("rejudge_agreement")
    if isinstance(agreement, dict) and agreement.get("judge") is not None:
        notes.append(summary(agreement) if agreement.get("asked") else "re-judge: nothing re-asked (no agreement)")
    elif isinstance(agreement, dict) and agreement.get("rate") is not None:
        notes.append(f"re-judge agreement {agreement['rate']:.1f}%")
    elif isinstance(agreement, (int, float)):
        notes.append(f"re-judge agreement {agreement:.1f}%")
    notes += [e.get("rejudge_note"), f"scoring: {e['scoring_preset']}" if e.get("scoring_preset") else None,
              e.get("outputs") if str(e.get("outputs")).startswith("outputs reproduced") else None,
              *(f"self-reported: {t}" for t in e.get("self_reported") or [])]
    if e.get("harness_version"):
        notes.append(f"harness {e['harness_version']}")
    notes.append(e.get("about"))
    board = family_named(e.get("family")).board
    notes += [e.get(k) for k in board.notes]
    first = (("★ frontier" if e["frontier"] else f"dominated ({len(e.get('dominated_by') or [])})")
             if e.get("frontier") is not None else rank_text(e))
    cells: list[Any] = [first, e.get("name"), e.get("records")]
    d = board.digits
    cells += [fixed(e.get(k), d) if e.get(f"{k}_low") is None and e.get(f"{k}_high") is None and e.get(k) is not None
              else f"{fixed(e.get(k), d)} ({fixed(e.get(f'{k}_low'), d)}–{fixed(e.get(f'{k}_high'), d)})" for k, _ in board.columns]
    if board.counts is not None:
        cells.append(" / ".join("–" if e.get(k) is None else str(e[k]) for k in board.counts.keys))
    cells.append("; ".join(str(n) for n in notes if n))
    return cells


def header(e: dict[str, Any]) -> list[str]:
    """The table header of a row's family: rank, entry, what was scored, its columns, its counts column, notes."""
    board = family_named(e.get("family")).board
    counts = [board.counts.label.lower()] if board.counts is not None else []
    return ["frontier" if board.frontier else "rank", "entry", board.records.lower(), *(t for _, t in board.columns),
            *counts, "notes"]


def markdown_board(entries: list[dict[str, Any]]) -> str:
    """Every comparable group as its own section and table (entries already in board order)."""
    if not entries:
        return "_No verified submission yet._\n"
    parts = []
    for _, rows in groupby(entries, key=lambda e: e["group"]):
        rows = list(rows)
        board = family_named(rows[0].get("family")).board
        scale = board.unit
        order = _ordering(board)
        tied = sorted({str(r["no_order"]) for r in rows if r.get("no_order")})
        order += f"; no rank shown: {tied[0]}. {board.tie_hint}".rstrip(". ") if tied else ""
        order += "; degenerate baselines last, never ranked" if any(r.get("degenerate") for r in rows) else ""
        parts.append(f"### {md_cell(group_title(rows[0]))}\n\n{md_cell(scale[:1].upper() + scale[1:])}.\n"
                     f"{md_cell(order[:1].upper() + order[1:])}.\n\n"
                     + md_table(header(rows[0]), (_row_cells(e) for e in rows)) + "\n")
    return "".join(parts)


def _rejudge_note(rejudge: Any) -> list[str]:
    """Where the re-judge agreement in the notes comes from (nothing without a report)."""
    if not isinstance(rejudge, dict):
        return []
    return [f"Re-judge agreement (in the notes) comes from `{REPORT_NAME}`, written by `privasis-bench leaderboard verify\n"
            f"... --report leaderboards/{REPORT_NAME}`, each with the seed it was re-judged with; CI re-asks the judge "
            "with that seed\n(`--check-report`) and fails when a number differs or a verified entry is missing.\n\n"]


def _family_lines(entries: list[dict[str, Any]]) -> list[str]:
    """One line per registered family with entries (from the registry: what its numbers are, how its tables are
    ordered, how its verified entries were checked), then the registered families without one."""
    present = {e.get("family") for e in entries}
    lines = []
    for f in board_families():
        if f.name not in present:
            continue
        checked = ("re-judged with the task's pinned judge in CI" if f.rejudge
                   else "recomputed from their outputs and the shipped documents")
        counts = f"; counts column: {f.board.counts.title}" if f.board.counts is not None else ""
        lines.append(f"- **{md_cell(f.title)}**: {md_cell(f.board.unit.split(';')[0])}; {md_cell(_ordering(f.board))}; "
                     f"verified entries {checked}{md_cell(counts)}.\n")
    empty = [md_cell(f.title) for f in board_families() if f.name not in present]
    return lines + ([f"- Registered, no entry yet: {', '.join(empty)}.\n"] if empty else [])


def readme(entries: list[dict[str, Any]], rejected: list[dict[str, Any]], built: dict[str, Any],
           parts: BoardParts = BoardParts()) -> str:
    """The whole ``leaderboards/README.md``."""
    text = [
        "# leaderboards/\n\n",
        "Built by `privasis-bench leaderboard build` from the submissions in `../submissions/`: do not edit by hand\n"
        "(CI rebuilds the board and fails when this folder differs from the rebuild). Every number was recomputed from\n"
        "the submitted per-record outputs by `privasis-bench leaderboard verify`. Open `index.html` for the page with\n"
        "charts and per-record viewers; `privasis.json` holds the same data.\n\n",
        "Every task family is on this board through the same submit/verify/build path; each table says what its\n"
        "numbers are and how it is ordered, only against comparable entries (the same task, track and record set, and\n"
        "the fields a family names, such as its estimators); entries tied on the headline share a rank, shown as `1=`\n"
        "(no tie-break), and a group where every entry ties shows no rank. A degenerate baseline (it deletes\n"
        "everything, or changes nothing) is listed after the real systems and never ranked.\n\n",
        *_family_lines(entries),
        "\n**Self-reported** entries were not re-judged. Partial runs (fewer records than the task) are ranked only among\n"
        "themselves; a baseline that reads gold labels is shown for reference and never ranked. Every entry and every\n"
        "family can be downloaded as CSV and JSON from `index.html` (`data/`), and each verified entry offers its\n"
        "Every Eval Ever record (and its Hub eval-results YAML where its task is a Hub dataset).\n\n",
        "Submit with `privasis-bench submit RUN --name ORG/MODEL` and a pull request (see\n"
        "[the submission guide](../submissions/README.md) and [publishing](../docs/publishing.md));\n"
        "`seed_board.sh` reproduces the seeded sample-task entries of every family, from one list.\n\n",
        f"Built {md_cell(built['date'])} (newest submission) by privasis-bench {md_cell(built['harness_version'])}.\n\n",
        *_rejudge_note(built.get("rejudge")),
        "## Board\n\n", markdown_board(entries), crosstask_markdown(entries),
    ]
    if rejected:
        text.append("## Rejected submissions\n\n" + "".join(f"- {md_cell(r['path'])}: {md_cell(r['problems'])} problem(s)\n"
                                                           for r in rejected) + "\n")
    return "".join(text) + "".join(md for _, md in parts.markdown)
