"""The cross-task view: one line per entry name and track, one column per task, each cell the task family's
headline number with where the entry stands in its group (its rank, its place on the frontier, or why it has
none), linked to the row in its table. Generic over families: the headline and its digits come from the family's
board spec. Every text a submitter controls is escaped.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.leaderboard.escaping import escape, fixed, md_table
from privasis_bench.leaderboard.family_api import family_named

__all__ = ["standing_text", "row_id", "crosstask_html", "crosstask_markdown"]


def standing_text(e: dict[str, Any]) -> str:
    """Where a row stands in its group, in a few words."""
    if e.get("degenerate"):
        return "baseline, not ranked"
    if e.get("frontier") is not None and e.get("rank") is None and e.get("rankable"):
        return "on the frontier" if e.get("frontier") else f"dominated by {len(e.get('dominated_by') or [])}"
    if e.get("no_order"):
        return "all tied"
    return "not ranked" if e.get("rank") is None else f"#{e['rank']}{'=' if e.get('tied') else ''}"


def row_id(e: dict[str, Any]) -> str:
    """The id of a row's line in its table (what the cross-task view links to)."""
    raw = f"{e.get('task')}-{e.get('track')}-{e.get('group')}-{e.get('name')}"
    return "row-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in raw)


def _matrix(entries: list[dict[str, Any]]) -> tuple[list[str], dict[tuple[str, str], dict[str, dict[str, Any]]]]:
    tasks = sorted({str(e["task"]) for e in entries})
    lines: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for e in entries:
        cells = lines.setdefault((str(e.get("name")), str(e.get("track") or "")), {})
        cells.setdefault(str(e["task"]), e)  # board order: a full run's row comes before a partial one's
    return tasks, lines


def _keys(board: Any) -> list[str]:
    """The numbers a cell shows: the headline, or both frontier measures for a frontier family."""
    return [k for k, _ in board.rank_by[:2]] if board.frontier else [board.rank_key]


def _value(e: dict[str, Any]) -> str:
    board = family_named(e.get("family")).board
    return " / ".join(fixed(e.get(k), board.digits) for k in _keys(board))


def _headline(entries: list[dict[str, Any]], task: str) -> str:
    board = family_named(next(e for e in entries if e["task"] == task).get("family")).board
    return " / ".join(dict(board.columns).get(k, k) for k in _keys(board))


def crosstask_html(entries: list[dict[str, Any]]) -> str:
    """The view's section of ``index.html`` ('' on an empty board)."""
    if not entries:
        return ""
    tasks, lines = _matrix(entries)
    heads = "".join(f"<th data-sort='num'>{escape(t)}<div class='sub'>{escape(_headline(entries, t))}</div></th>"
                    for t in tasks)
    body = []
    for (name, track), cells in sorted(lines.items()):
        tds = []
        for t in tasks:
            e = cells.get(t)
            if e is None:
                tds.append(f"<td data-label='{escape(t)}' data-v=''>·</td>")
                continue
            v = e.get(family_named(e.get("family")).board.rank_key)
            tds.append(f"<td data-label='{escape(t)}' data-v='{v if isinstance(v, (int, float)) else ''}'>"
                       f"<a href='#{escape(row_id(e))}'>{escape(_value(e))}</a>"
                       f"<div class='sub'>{escape(standing_text(e))}</div></td>")
        body.append(f"<tr data-track='{escape(track)}' data-search='{escape(name.lower())}'><td class='entry' "
                    f"data-label='Entry' data-v='{escape(name)}'><b>{escape(name)}</b><div class='sub'>{escape(track)}"
                    f"</div></td>{''.join(tds)}</tr>")
    return ("<section id='cross-task'><h2>Per entry, across tasks</h2><p class='sub'>Each cell: the task family's "
            "headline (named under the task) and where the entry stands in its group; follow a number to its row. "
            "· : no entry on that task.</p><div class='wide'><table class='board cross'><thead><tr>"
            f"<th data-sort='text' class='txt entry'>Entry</th>{heads}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table></div></section>\n")


def crosstask_markdown(entries: list[dict[str, Any]]) -> str:
    """The view as a Markdown section ('' on an empty board)."""
    if not entries:
        return ""
    tasks, lines = _matrix(entries)
    rows = [[name, track, *(f"{_value(cells[t])} ({standing_text(cells[t])})" if t in cells else "·" for t in tasks)]
            for (name, track), cells in sorted(lines.items())]
    return ("## Per entry, across tasks\n\nEach cell: the task family's headline and where the entry stands in its "
            "group (· : no entry on that task).\n\n" + md_table(["entry", "track", *tasks], rows) + "\n")
