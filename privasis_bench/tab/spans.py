"""Masked character spans: merging, and TAB's masked-output file ``{doc_id: [[start, end], ...]}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from privasis_bench.errors import DataError

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
    """Read a masked-output JSON file; with ``texts`` (doc_id -> text), check ids and offsets against the gold."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: predictions file not found") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected TAB's masked-output format, a JSON object {{doc_id: [[start, end], ...]}}")
    out: dict[str, list[Span]] = {}
    for doc_id, spans in raw.items():
        out[str(doc_id)] = _spans(spans, f"{path}: document {doc_id!r}")
        if texts is not None:
            if doc_id not in texts:
                raise DataError(f"{path}: document {doc_id!r} is not in the task's data; pass the matching --data-files")
            n = len(texts[doc_id])
            bad = next(((s, e) for s, e in out[doc_id] if s < 0 or e > n or s >= e), None)
            if bad:
                raise DataError(f"{path}: document {doc_id!r}: span {list(bad)} is not inside its text ({n} characters)")
    return out


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
