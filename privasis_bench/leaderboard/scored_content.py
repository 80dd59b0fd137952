"""Content identity: the digest of what the board scores, never of the bytes a submitter wrote around it.

Two entries are one set of outputs when these digests are equal (:mod:`.ownership`). Only the fields scoring reads go
in, each family its own (``FamilySpec.content``; Privasis: per record in id order the output, whether it failed and
every judge answer its verdicts come from, by attribute name), so an unknown field, a key order, padding or a row
order cannot make a copy "new content". Every text goes in **normalised** (:func:`normal_text`: NFKC, case folded,
no white space), so a doubled space, a space inside a placeholder, a moved line break or a changed case is the same
content; the judge and TAB's alignment read such outputs alike.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from typing import Any, Iterable

_TARGET = ("name", "value", "guess", "guess_raw", "original_guess", "original_guess_raw", "compare_answer",
           "compare_answer_raw")
_KEEP = ("name", "value", "guess", "guess_raw", "inclusion_answer", "inclusion_answer_raw")


def normal_text(value: Any) -> Any:
    """A text with its cosmetic differences removed (NFKC, case folded, no white space); anything else as given."""
    if not isinstance(value, str):
        return value
    return "".join(unicodedata.normalize("NFKC", value).casefold().split())


def digest(items: Iterable[Any]) -> str:
    """sha256 over the items as canonical JSON, one a line."""
    h = hashlib.sha256()
    for item in items:
        h.update(json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _pick(item: Any, keys: tuple[str, ...]) -> Any:
    return [normal_text(item.get(k)) if k != "value" else item.get(k) for k in keys] if isinstance(item, dict) else None


def _items(row: dict[str, Any], kind: str, keys: tuple[str, ...]) -> list[Any]:
    values = row.get(kind)
    picked = [_pick(i, keys) for i in values] if isinstance(values, list) else []
    return sorted(picked, key=lambda p: json.dumps(p, sort_keys=True, default=str))


def privasis_content(rows: list[dict[str, Any]], results: dict[str, Any] | None = None) -> str:
    """The digest of a Privasis entry's scored content (see the module docstring)."""
    items = [[str(r.get("record_id")), normal_text(r.get("output")), bool(r.get("output_failed")),
              _items(r, "targets", _TARGET), _items(r, "keep", _KEEP)] for r in rows]
    return digest(sorted(items, key=lambda i: i[0]))
