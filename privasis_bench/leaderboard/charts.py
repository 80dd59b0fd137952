"""Inline SVG charts rendered in Python (no script, no network): the privacy-utility scatter and leak-type bars."""

from __future__ import annotations

from typing import Any

from privasis_bench.leaderboard.escaping import escape, number

PALETTE = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#475569")
LEAK_COLOURS = {"direct": "#dc2626", "inference": "#f59e0b", "proximity": "#8b5cf6"}


#: Characters of an entry's label that fit left of a bar (longer ones end in "…", the whole label is its tooltip).
LABEL_CHARS = 42


def _fmt(x: float) -> str:
    return f"{x:.1f}"


def _clip(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def scatter(entries: list[dict[str, Any]], x_key: str, y_key: str, x_title: str, y_title: str,
            x_direction: str = "→ more private") -> str:
    """Sanitization (x) against retention (y) per entry, 0-100 on both axes, with CI whiskers (``x_direction``:
    which way along x is more private)."""
    w, h, m = 520, 420, 56
    sx = lambda v: m + (w - 2 * m) * v / 100.0  # noqa: E731
    sy = lambda v: h - m - (h - 2 * m) * v / 100.0  # noqa: E731
    out = [f'<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{escape(y_title)} against {escape(x_title)}">']
    for tick in range(0, 101, 20):
        out.append(f'<line x1="{_fmt(sx(tick))}" y1="{m}" x2="{_fmt(sx(tick))}" y2="{h - m}" class="grid"/>'
                   f'<line x1="{m}" y1="{_fmt(sy(tick))}" x2="{w - m}" y2="{_fmt(sy(tick))}" class="grid"/>'
                   f'<text x="{_fmt(sx(tick))}" y="{h - m + 16}" class="tick" text-anchor="middle">{tick}</text>'
                   f'<text x="{m - 8}" y="{_fmt(sy(tick) + 4)}" class="tick" text-anchor="end">{tick}</text>')
    out.append(f'<text x="{w / 2}" y="{h - 12}" class="axis" text-anchor="middle">{escape(x_title)} (%) {escape(x_direction)}</text>'
               f'<text transform="translate(16 {h / 2}) rotate(-90)" class="axis" text-anchor="middle">'
               f'{escape(y_title)} (%) → more useful</text>')
    for i, e in enumerate(entries):
        colour = PALETTE[i % len(PALETTE)]
        x, y = number(e.get(x_key)), number(e.get(y_key))
        if x is None or y is None:
            continue
        out.append(f'<g class="point" data-task="{escape(e["task"])}" data-track="{escape(e["track"])}">'
                   f'<title>{escape(e["name"])} ({escape(e["task"])}): {x:.2f} / {y:.2f}</title>')
        for lo, hi, horizontal in ((number(e.get(f"{x_key}_low")), number(e.get(f"{x_key}_high")), True),
                                   (number(e.get(f"{y_key}_low")), number(e.get(f"{y_key}_high")), False)):
            if lo is not None and hi is not None:
                if horizontal:
                    out.append(f'<line x1="{_fmt(sx(lo))}" y1="{_fmt(sy(y))}" x2="{_fmt(sx(hi))}" y2="{_fmt(sy(y))}" stroke="{colour}" class="whisker"/>')
                else:
                    out.append(f'<line x1="{_fmt(sx(x))}" y1="{_fmt(sy(lo))}" x2="{_fmt(sx(x))}" y2="{_fmt(sy(hi))}" stroke="{colour}" class="whisker"/>')
        out.append(f'<circle cx="{_fmt(sx(x))}" cy="{_fmt(sy(y))}" r="6" fill="{colour}"/>'
                   f'<text x="{_fmt(sx(x) + 9)}" y="{_fmt(sy(y) - 8)}" class="label">{escape(_clip(str(e["name"]).split("/")[-1], 24))}</text></g>')
    out.append("</svg>")
    return "".join(out)


def leak_bars(entries: list[dict[str, Any]]) -> str:
    """One stacked bar per entry: the share of its failed targets leaked directly, by inference, by proximity."""
    row_h, label_w, bar_w = 26, 300, 330
    h = row_h * max(len(entries), 1) + 36
    out = [f'<svg class="chart" viewBox="0 0 {label_w + bar_w + 70} {h}" role="img" aria-label="leak types per entry">']
    for i, e in enumerate(entries):
        y = 8 + i * row_h
        leaks = e.get("leaks") if isinstance(e.get("leaks"), dict) else {}
        ratios = leaks.get("ratios") if isinstance(leaks.get("ratios"), dict) else {}
        failed = int(number(leaks.get("failed_targets")) or 0)
        label = f"{e['name']} · {e['task']}"
        out.append(f'<g class="point" data-task="{escape(e["task"])}" data-track="{escape(e["track"])}">'
                   f'<text x="{label_w - 8}" y="{y + 15}" class="label" text-anchor="end">'
                   f'<title>{escape(label)}</title>{escape(_clip(label))}</text>')
        x = float(label_w)
        for kind, colour in LEAK_COLOURS.items():
            ratio = number(ratios.get(kind)) or 0.0
            share = ratio * bar_w / 100.0
            if share > 0:
                out.append(f'<rect x="{_fmt(x)}" y="{y}" width="{_fmt(share)}" height="{row_h - 8}" fill="{colour}">'
                           f'<title>{kind}: {ratio:.1f}% of {failed} failed targets</title></rect>')
            x += share
        if not failed:
            out.append(f'<text x="{label_w + 4}" y="{y + 14}" class="tick">no leaked target</text>')
        out.append(f'<text x="{label_w + bar_w + 6}" y="{y + 14}" class="tick">n={failed}</text></g>')
    legend_y = h - 14
    for j, (kind, colour) in enumerate(LEAK_COLOURS.items()):
        lx = label_w + j * 110
        out.append(f'<rect x="{lx}" y="{legend_y - 10}" width="12" height="12" fill="{colour}"/>'
                   f'<text x="{lx + 16}" y="{legend_y}" class="tick">{kind}</text>')
    out.append("</svg>")
    return "".join(out)
