"""The privacy-utility scatter of the paper's figures: re-identification risk (TRIR, lower is better) across,
text preserved similarity (TPS, higher is better) up, one labelled point per run; the paper's as-published
numbers, when asked for, in another colour and marked as such (they come from other estimators and data).

A plain SVG string: no plotting library is needed.
"""

from __future__ import annotations

import math
from html import escape
from typing import Sequence

W, H, PAD, RIGHT = 720, 440, 60, 150


def _scale(values: Sequence[float]) -> tuple[float, float]:
    """An axis range in tenths around the values, inside [0, 1]."""
    lo = max(0.0, math.floor(min(values, default=0.0) * 10 - 0.5) / 10)
    hi = min(1.0, math.ceil(max(values, default=1.0) * 10 + 0.5) / 10)
    return (lo, hi) if hi > lo else (0.0, 1.0)


def scatter_svg(points: Sequence[tuple[str, float, float]], *, published: Sequence[tuple[str, float, float]] = (),
                title: str = "Privacy-utility trade-off") -> str:
    """An SVG scatter of (label, TRIR, TPS) points, both in [0, 1]; ``published`` points drawn apart."""
    xs = [p[1] for p in (*points, *published)]
    ys = [p[2] for p in (*points, *published)]
    x0, x1 = _scale(xs)
    y0, y1 = _scale(ys)

    def px(x: float) -> float:
        return PAD + (x - x0) / (x1 - x0) * (W - PAD - RIGHT)

    def py(y: float) -> float:
        return H - PAD - (y - y0) / (y1 - y0) * (H - 2 * PAD)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
             'font-family="sans-serif" font-size="12">',
             f'<rect width="{W}" height="{H}" fill="white"/>',
             f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="15">{escape(title)}</text>',
             f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - RIGHT}" y2="{H - PAD}" stroke="black"/>',
             f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>',
             f'<text x="{(W - RIGHT + PAD) / 2}" y="{H - 18}" text-anchor="middle">TRIR: re-identification risk (lower is better)</text>',
             f'<text x="18" y="{H / 2}" text-anchor="middle" transform="rotate(-90 18 {H / 2})">'
             'TPS: text preserved similarity (higher is better)</text>']
    for i in range(5):
        xv, yv = x0 + i * (x1 - x0) / 4, y0 + i * (y1 - y0) / 4
        parts.append(f'<text x="{px(xv):.1f}" y="{H - PAD + 16}" text-anchor="middle">{100 * xv:.0f}%</text>')
        parts.append(f'<text x="{PAD - 6}" y="{py(yv) + 4:.1f}" text-anchor="end">{100 * yv:.0f}%</text>')
    for label, x, y in published:
        parts.append(f'<rect x="{px(x) - 4:.1f}" y="{py(y) - 4:.1f}" width="8" height="8" fill="#999"/>'
                     f'<text x="{px(x) + 7:.1f}" y="{py(y) + 4:.1f}" fill="#777">{escape(label)} (as published)</text>')
    for label, x, y in points:
        parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="5" fill="#1f6fb4"/>'
                     f'<text x="{px(x) + 8:.1f}" y="{py(y) - 6:.1f}">{escape(label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
