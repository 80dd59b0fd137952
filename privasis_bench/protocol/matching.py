"""String matching rules of the protocol (§3-4): value_in, value_text and think-stripping.

Every rule here is deliberately literal: case-insensitive substring tests over ``str(item)``.
"""

from __future__ import annotations

from typing import Any, Literal

MatchMode = Literal["any", "all"]


def value_items(value: Any) -> list[str]:
    """The strings a value is matched by: list items, dict values, or the value itself (via ``str``)."""
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    if isinstance(value, dict):
        return [str(item) for item in value.values()]
    return [str(value)]


def value_in(value: Any, text: str | None, mode: MatchMode = "any") -> bool:
    """Case-insensitive substring test of ``value`` in ``text``.

    ``any``: at least one item occurs (used for leaks); ``all``: every item occurs (used for
    retention). Python's semantics for empty collections are kept: an empty list is never "any"
    but always "all".
    """
    if mode not in ("any", "all"):
        raise ValueError(f"unknown match mode {mode!r}")
    haystack = (text or "").lower()
    hits = (item.lower() in haystack for item in value_items(value))
    return any(hits) if mode == "any" else all(hits)


def value_text(value: Any) -> str:
    """The value as "information" for the inclusion question: list/dict items joined by ``", "``."""
    return ", ".join(value_items(value)) if isinstance(value, (list, tuple, dict)) else str(value)


def is_empty_output(text: str | None) -> bool:
    """True for a missing or whitespace-only model output (it leaks nothing and retains nothing)."""
    return text is None or not text.strip()
