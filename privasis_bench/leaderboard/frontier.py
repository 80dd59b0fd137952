"""The privacy-utility frontier of one comparable group, as an inline SVG the page draws without a script.

For a family whose board spec sets ``frontier`` (its two ``rank_by`` keys pull apart, so one order would mislead):
the first key across, the second up, 0-100 on both axes. Entries on the group's Pareto frontier (:func:`.rows.pareto`)
are filled and joined by a line; dominated ones are grey rings; degenerate baselines are hollow squares, drawn as the
end points they are. Labels sit in a column right of the plot, moved apart so no two overlap, each joined to its
point by a thin leader line. Every text a submitter controls is escaped.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.leaderboard.escaping import escape, number
from privasis_bench.tasks.family import BoardSpec

#: Plot box, label column and line height of the chart (SVG user units).
W, H, M, GUTTER, LINE = 420, 380, 48, 250, 15


def spread(wanted: list[float], low: float, high: float, gap: float = LINE) -> list[float]:
    """Label positions as close to ``wanted`` as possible, in the same order, at least ``gap`` apart and inside
    [low, high] (when they fit)."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed: list[float] = []
    for i in order:
        placed.append(max(wanted[i], low if not placed else placed[-1] + gap))
    overflow = placed[-1] - high if placed else 0.0
    if overflow > 0:  # push the stack up from the bottom, as far as the top allows
        for k in range(len(placed) - 1, -1, -1):
            limit = high if k == len(placed) - 1 else placed[k + 1] - gap
            placed[k] = max(low, min(placed[k], limit))
    out = [0.0] * len(wanted)
    for i, y in zip(order, placed):
        out[i] = y
    return out


def _label(e: dict[str, Any]) -> str:
    text = str(e.get("name"))
    return text if len(text) <= 34 else text[:33] + "…"


def frontier_chart(rows: list[dict[str, Any]], board: BoardSpec) -> str:
    """The group's frontier chart ('' when fewer than two rows have both numbers)."""
    (xk, xb), (yk, yb) = board.rank_by[:2]
    titles = dict(board.columns)
    points = [(e, number(e.get(xk)), number(e.get(yk))) for e in rows]
    points = [(e, x, y) for e, x, y in points if x is not None and y is not None]
    if len(points) < 2:
        return ""
    sx = lambda v: M + (W - 2 * M) * min(max(v, 0.0), 100.0) / 100.0  # noqa: E731
    sy = lambda v: H - M - (H - 2 * M) * min(max(v, 0.0), 100.0) / 100.0  # noqa: E731
    out = [f'<svg class="chart frontier" viewBox="0 0 {W + GUTTER} {H}" role="img" '
           f'aria-label="{escape(titles.get(yk, yk))} against {escape(titles.get(xk, xk))}">']
    for t in range(0, 101, 20):
        out.append(f'<line x1="{sx(t):.1f}" y1="{M}" x2="{sx(t):.1f}" y2="{H - M}" class="grid"/>'
                   f'<line x1="{M}" y1="{sy(t):.1f}" x2="{W - M}" y2="{sy(t):.1f}" class="grid"/>'
                   f'<text x="{sx(t):.1f}" y="{H - M + 15}" class="tick" text-anchor="middle">{t}</text>'
                   f'<text x="{M - 6}" y="{sy(t) + 4:.1f}" class="tick" text-anchor="end">{t}</text>')
    better = {"lower": "lower is better", "higher": "higher is better"}
    out.append(f'<text x="{W / 2}" y="{H - 10}" class="axis" text-anchor="middle">{escape(titles.get(xk, xk))} '
               f'({better[xb]})</text><text transform="translate(14 {H / 2}) rotate(-90)" class="axis" '
               f'text-anchor="middle">{escape(titles.get(yk, yk))} ({better[yb]})</text>')
    front = sorted((p for p in points if p[0].get("frontier")), key=lambda p: p[1])
    if len(front) > 1:
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for _, x, y in front)
        out.append(f'<polyline points="{path}" class="front-line"/>')
    ys = spread([sy(y) for _, _, y in points], 12.0, H - 12.0)
    for (e, x, y), ly in zip(points, ys):
        kind = "degenerate" if e.get("degenerate") else "on-front" if e.get("frontier") else "dominated"
        px, py, lx = sx(x), sy(y), W + 8
        mark = (f'<rect x="{px - 5:.1f}" y="{py - 5:.1f}" width="10" height="10" class="pt {kind}"/>'
                if kind == "degenerate" else f'<circle cx="{px:.1f}" cy="{py:.1f}" r="5.5" class="pt {kind}"/>')
        note = {"degenerate": "degenerate baseline, not ranked", "on-front": "on the frontier",
                "dominated": "dominated by " + ", ".join(str(n) for n in e.get("dominated_by") or [])}[kind]
        out.append(f'<g class="point {kind}" data-task="{escape(e["task"])}" data-track="{escape(e["track"] or "")}">'
                   f'<title>{escape(str(e.get("name")))}: {escape(titles.get(xk, xk))} {x:.{board.digits}f}, '
                   f'{escape(titles.get(yk, yk))} {y:.{board.digits}f} ({escape(note)})</title>'
                   f'<line x1="{px:.1f}" y1="{py:.1f}" x2="{lx - 3}" y2="{ly - 4:.1f}" class="leader"/>{mark}'
                   f'<text x="{lx}" y="{ly:.1f}" class="label {kind}">{"★ " if kind == "on-front" else ""}'
                   f'{escape(_label(e))}</text></g>')
    out.append("</svg>")
    return "".join(out)
