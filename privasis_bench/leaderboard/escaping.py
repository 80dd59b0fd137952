"""The one escaping layer every rendered format of the board goes through.

* :func:`escape` for HTML (``index.html``, the charts, every per-record viewer, Privasis and TAB alike): text and
  attribute values, quotes included, so a submitted string can neither close an attribute nor open a tag.
* :func:`md_cell` for Markdown (``leaderboards/README.md``, every family's tables): one line, every character
  Markdown or HTML gives a meaning to backslash-escaped, bare links defused (see :mod:`.markdown`).

Renderers never write a submitted string any other way; numbers are formatted by the renderer and still pass
through these when they come from a file (a string where a number was expected stays text).
"""

from __future__ import annotations

import html
import re
from typing import Any, Iterable

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>!|~&$@])")
_AUTOLINK = re.compile(r"(?i)(www)\.|:(?=//)")
_BREAKS = re.compile(r"[\r\n\t\v\f\u0085\u2028\u2029]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def escape(value: Any, quote: bool = True) -> str:
    """HTML text or attribute value for ``value`` (``&``, ``<``, ``>``, ``"`` and ``'`` escaped)."""
    return html.escape(str(value), quote=quote)


def md_cell(value: Any) -> str:
    """One Markdown table cell: a single line with every Markdown/HTML special character escaped ('' for None)."""
    if value is None:
        return ""
    text = _CONTROL.sub("", _BREAKS.sub(" ", str(value))).strip()
    return _AUTOLINK.sub(lambda m: f"{m.group(1)}\\." if m.group(1) else "\\:", _SPECIAL.sub(r"\\\1", text))


def md_table(header: list[str], rows: Iterable[list[Any]]) -> str:
    """A GitHub table whose every cell (header included) goes through :func:`md_cell`."""
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def number(value: Any) -> float | None:
    """A submitted value as a number to draw or compare (None for anything else, a bool or a numeric text included)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def fixed(value: Any, digits: int = 2, missing: str = "–") -> str:
    """A number shown with ``digits`` decimals (``missing`` for anything that is not a number)."""
    return missing if number(value) is None else f"{value:.{digits}f}"
