"""Where each board row may rank: comparable groups, ranks and group headings, for every family alike.

A row is a plain JSON-ready dict drawn by its family (``FamilySpec.row``). Rows are comparable only within one task,
track and record set and the fields the family's ``group_keys`` name (replacement quality: its estimators); a partial
run lands in its own group, and a row that reads gold labels or is a reference has no rank. Ranks follow the family's
``rank_by`` keys on the numbers as shown (the verifier's, rounded to the family's ``digits``): entries that show the
same numbers share a rank (``1=``), so a difference too small to see never orders two entries. No rank is shown where
an order says nothing: a *degenerate baseline* (deletes everything, changes nothing) is listed apart with its reason;
a group whose ranked rows all show the same headline gets ``no_order``; a ``frontier`` family's group marks each row
on the Pareto frontier or the entries that dominate it (:func:`pareto`).
"""

from __future__ import annotations

from typing import Any, Iterable

from privasis_bench.leaderboard.escaping import number
from privasis_bench.leaderboard.family_api import family_named

OVERALL = "overall"
#: Track order on the board: re-judged entries first.
TRACK_ORDER = ("verified", "self-reported")


def group_key(row: dict[str, Any]) -> tuple[str, str, str, tuple[str, ...]]:
    """Rows are comparable only within one task, track and record set, and the family's ``group_keys`` (numbers from
    different estimators are never ranked together)."""
    keys = family_named(row.get("family")).board.group_keys
    return (row["task"], row["track"] or "", row["record_set"] or "", tuple(str(row.get(k) or "") for k in keys))


def _group_order(key: tuple[str, str, str, tuple[str, ...]], rows: list[dict[str, Any]]) -> tuple:
    track = TRACK_ORDER.index(key[1]) if key[1] in TRACK_ORDER else len(TRACK_ORDER)
    partial = any(r["partial"] for r in rows)
    return (track, key[0] == OVERALL, key[0], partial, -max(r["records"] or 0 for r in rows), key[2], key[3])


def standing(row: dict[str, Any], order: tuple[tuple[str, str], ...], digits: int) -> tuple[float, ...]:
    """A row's place on its family's ranking keys as shown (rounded to ``digits``), smaller is better (a missing
    number is worst)."""
    out = []
    for key, better in order:
        value = row.get(key)
        value = None if number(value) is None else round(float(value), digits)
        out.append(float("inf") if value is None else (value if better == "lower" else -value))
    return tuple(out)


def pareto(rows: list[dict[str, Any]], axes: tuple[tuple[str, str], ...], digits: int) -> dict[int, list[str]]:
    """For each row (by position), the names of the rows that dominate it on ``axes`` as shown (at least as good on
    every axis, better on one); an empty list marks a row on the Pareto frontier. A row missing a number is
    dominated by nothing and dominates nothing (it is left off the frontier by the caller)."""
    places = [standing(r, axes, digits) for r in rows]
    out: dict[int, list[str]] = {}
    for i, a in enumerate(places):
        out[i] = [str(rows[j].get("name")) for j, b in enumerate(places) if j != i and float("inf") not in b
                  and float("inf") not in a and all(x <= y for x, y in zip(b, a)) and b != a]
    return out


def _mark_frontier(members: list[dict[str, Any]], board: Any) -> None:
    """No rank in a frontier family's group: each ranked row gets ``frontier`` (on it or not) and ``dominated_by``."""
    ranked = [r for r in members if r["rankable"]]
    dominated = pareto(ranked, board.rank_by, board.digits)
    for i, row in enumerate(ranked):
        complete = float("inf") not in standing(row, board.rank_by, board.digits)
        row["frontier"] = complete and not dominated[i]
        row["dominated_by"] = sorted(dominated[i])
        row["rank"] = None


def _no_order(members: list[dict[str, Any]], board: Any) -> str | None:
    """Why a group's ranks would say nothing (every ranked row shows the same headline), or None."""
    ranked = [r for r in members if r["rankable"]]
    heads = {standing(r, board.rank_by[:1], board.digits) for r in ranked}
    if len(ranked) < 2 or len(heads) != 1:
        return None
    value = ranked[0].get(board.rank_key)
    shown = f"{value:.{board.digits}f}" if isinstance(value, (int, float)) else "no number"
    return f"every ranked entry shows {shown} on the headline: no order to show"


def rank_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group rows, rank each group by its family's ``rank_by`` keys as shown (best first, ties share a rank and are
    marked ``tied``, unrankable rows last without a rank), and return them in board order with ``group`` (1, 2, ...
    in board order), ``rank`` and ``tied`` set."""
    groups: dict[tuple[str, str, str, tuple[str, ...]], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(group_key(row), []).append(row)
    out: list[dict[str, Any]] = []
    for position_of_group, key in enumerate(sorted(groups, key=lambda k: _group_order(k, groups[k])), start=1):
        board = family_named(groups[key][0].get("family")).board
        place = lambda r, b=board: standing(r, b.rank_by, b.digits)  # noqa: E731
        for row in groups[key]:  # a degenerate baseline is listed apart, never ranked
            if row.get("degenerate"):
                row["rankable"] = False
        members = sorted(groups[key], key=lambda r: (bool(r.get("degenerate")), not r["rankable"], place(r),
                                                     r["name"] or ""))
        rank, previous = 0, None
        for position, row in enumerate(members, start=1):
            if row["rankable"]:
                if place(row) != previous:
                    rank, previous = position, place(row)
                row["rank"] = rank
            else:
                row["rank"] = None
        no_order = None if board.frontier else _no_order(members, board)
        if board.frontier:
            _mark_frontier(members, board)
            members.sort(key=lambda r: (bool(r.get("degenerate")), not r["rankable"], not r.get("frontier"),
                                        len(r.get("dominated_by") or ()), place(r), r["name"] or ""))
        for row in members:  # ties share a rank and say so (the board shows "1="); no rank where no order holds
            if no_order and row["rank"] is not None:
                row["rank"], row["no_order"] = None, no_order
            row["tied"] = row["rank"] is not None and sum(r["rank"] == row["rank"] for r in members) > 1
            row["group"] = position_of_group
            out.append(row)
    return out


def group_title(row: dict[str, Any]) -> str:
    """A heading for a row's comparable group: task, track and which records it covers."""
    judged = family_named(row.get("family")).rejudge is not None  # a judged family's entries are re-judged
    track = (("verified (re-judged)" if judged else "verified (recomputed from the shipped documents)")
             if row["track"] == "verified" else f"{row['track']} (not re-judged)" if judged else str(row["track"]))
    if row["partial"]:
        of = f" of {row['task_records']}" if row.get("task_records") else ""
        records = f"partial runs: {row['records_loaded'] or row['records']}{of} records, ranked only among themselves"
    else:
        records = "full runs"
    estimators = f" · {row['estimators']}" if row.get("estimators") else ""  # what scored it, when a family says
    return f"{row['task']} · {track} · {records}{estimators}"
