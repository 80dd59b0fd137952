"""Masked character spans: merging, and TAB's masked-output file ``{doc_id: [[start, end], ...]}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from privasis_bench.errors import DataError
from privasis_bench.fsutil import loads_json, read_text

Span = tuple[int, int]


def merge_spans(spans: Iterable[Sequence[int]]) -> list[Span]:
    """Sorted, non-overlapping spans covering the same characters (touching spans are kept apart)."""
    out: list[list[int]] = []
    for start, end in sorted((int(s), int(e)) for s, e in spans if int(e) > int(s)):
        if out and start < out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def read_masked_output(path: str | Path, texts: dict[str, str] | None = None) -> dict[str, list[Span]]:
    """Read a masked-output JSON file; with ``texts`` (doc_id -> text), refuse ids that are not in the gold.

    Spans are kept exactly as written, as TAB's official script keeps them: an empty or reversed span masks nothing
    (it still counts as one unit of mention-level precision, matched by no annotator), a span reaching past the text
    masks the characters the text has (see :func:`span_notices`)."""
    if not Path(path).exists():
        raise DataError(f"{path}: predictions file not found")
    raw = loads_json(read_text(path, "masked-output JSON file"), str(path), unique_keys=True)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected TAB's masked-output format, a JSON object {{doc_id: [[start, end], ...]}}")
    out: dict[str, list[Span]] = {}
    for doc_id, spans in raw.items():
        out[str(doc_id)] = _spans(spans, f"{path}: document {doc_id!r}")
        if texts is not None and doc_id not in texts:
            raise DataError(f"{path}: document {doc_id!r} is not in the task's data; pass the matching --data-files")
    return out


def span_notices(path: str | Path, spans: dict[str, list[Span]], texts: dict[str, str]) -> list[str]:
    """One line per kind of span the official script accepts but that masks less than it seems: empty or reversed
    spans, and spans outside the document's text (counted over the documents of ``texts``)."""
    empty = outside = 0
    docs: set[str] = set()
    for doc_id, doc_spans in spans.items():
        if doc_id not in texts:
            continue
        n = len(texts[doc_id])
        for start, end in doc_spans:
            if end <= start:
                empty += 1
                docs.add(doc_id)
            elif start < 0 or end > n:
                outside += 1
                docs.add(doc_id)
    notes = []
    if empty:
        notes.append(f"{path}: {empty} span(s) are empty or reversed (end <= start); scored as TAB's script does: "
                     "they mask nothing and count as unmatched units of mention precision")
    if outside:
        notes.append(f"{path}: {outside} span(s) reach outside their document's text; scored as TAB's script does: "
                     "only the characters inside the text are masked")
    if docs:
        notes[-1] += f" (documents: {', '.join(sorted(docs)[:5])}{' ...' if len(docs) > 5 else ''})"
    return notes


def _spans(value: Any, where: str) -> list[Span]:
    if not isinstance(value, list):
        raise DataError(f"{where}: expected a list of [start, end] pairs")
    out: list[Span] = []
    for i, pair in enumerate(value):
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)):
            raise DataError(f"{where}: span {i + 1} must be a pair of integer offsets [start, end], not {pair!r}")
        out.append((pair[0], pair[1]))
    return out


def write_masked_output(path: str | Path, spans: dict[str, Sequence[Sequence[int]]]) -> None:
    """Write spans in TAB's masked-output format (for the official script)."""
    body = {doc_id: [[int(s), int(e)] for s, e in doc_spans] for doc_id, doc_spans in spans.items()}
    Path(path).write_text(json.dumps(body, ensure_ascii=False) + "\n", encoding="utf-8")
