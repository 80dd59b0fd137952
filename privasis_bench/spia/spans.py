"""TAB-style span recall beside CPR, for the documents SPIA ships span annotations for.

SPIA's repository holds, beside its attribute files, TAB-schema mention annotations of the same documents
(``data/entity/entity_tab_144.jsonl``, ``entity_panorama_151.jsonl``: one document per line, ``metadata.data_id`` as
in the attribute file, the same ``text``, and ``entities`` with ``start_offset``, ``end_offset``, ``entity_id``,
``identifier_type`` DIRECT / QUASI / NO_MASK). There is none for the 380 PANORAMA documents outside the 151.

A rewrite is aligned back to the characters of the original it no longer shows (TAB's alignment,
:func:`privasis_bench.tab.alignment.masked_spans`); then, over the mentions to mask (DIRECT and QUASI):

- **token recall**: the share of the mentions' word tokens that are masked;
- **direct / quasi entity recall**: the share of entities (by ``entity_id``) all of whose mentions' words are masked.

TAB's own scorer also skips stop words and punctuation inside a mention (a spaCy tagger); here every word counts.
Five mentions of ``entity_panorama_151.jsonl`` at the pinned commit sit one or more characters off their
``span_text``: a mention is re-anchored to the nearest place within :data:`REANCHOR` characters where its text
stands, and left out (with a notice) when there is none.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.errors import DataError

TO_MASK = ("DIRECT", "QUASI")
REANCHOR = 8
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class SpanMention:
    """One annotated mention to mask: its characters, its entity and how directly it identifies."""

    start: int
    end: int
    entity: str
    identifier: str


@dataclass(frozen=True)
class SpanDocument:
    """One document's text and its mentions to mask."""

    id: str
    text: str
    mentions: tuple[SpanMention, ...]


def is_span_file(path: str | Path) -> bool:
    """True when the file's first row carries ``entities`` (a span file), not ``subjects`` (an attribute file)."""
    try:
        with Path(path).open("r", encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
        row = json.loads(first) if first else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False  # the attribute reader names the problem
    return isinstance(row, dict) and "entities" in row and "subjects" not in row


def load_span_documents(path: str | Path) -> tuple[dict[str, SpanDocument], list[str]]:
    """The span documents of a file by id, and notices (mentions re-anchored or left out); a bad row raises one
    DataError naming the file, the line and the field."""
    path = Path(path)
    docs: dict[str, SpanDocument] = {}
    moved = dropped = 0
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read the span annotations ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc, shifted, lost = _document(line)
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{path}:{number}: {exc}") from None
        if doc.id in docs:
            raise DataError(f"{path}:{number}: metadata.data_id: {doc.id!r} appears on an earlier line")
        docs[doc.id] = doc
        moved, dropped = moved + shifted, dropped + lost
    notices = []
    if moved or dropped:
        notices.append(f"{path.name}: {moved} mention(s) re-anchored to their text within {REANCHOR} characters, "
                       f"{dropped} left out of span recall (their text is not at their offsets)")
    return docs, notices


def _document(line: str) -> tuple[SpanDocument, int, int]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(row, dict) or not isinstance(row.get("metadata"), dict):
        raise ValueError("metadata: missing or not an object")
    doc_id, text, entities = row["metadata"].get("data_id"), row.get("text"), row.get("entities")
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise ValueError("metadata.data_id: missing or not text")
    if not isinstance(text, str):
        raise ValueError("text: missing or not text")
    if not isinstance(entities, list):
        raise ValueError("entities: missing or not a list")
    mentions, moved, dropped = [], 0, 0
    for i, item in enumerate(entities):
        where = f"entities[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where}: not an object")
        start, end, shown = item.get("start_offset"), item.get("end_offset"), item.get("span_text")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) or not 0 <= start < end:
            raise ValueError(f"{where}: start_offset/end_offset must be integers with 0 <= start < end")
        if not isinstance(shown, str) or not isinstance(item.get("identifier_type"), str):
            raise ValueError(f"{where}: span_text and identifier_type must be text")
        if item["identifier_type"] not in TO_MASK:
            continue
        if text[start:end] != shown:
            at = _nearest(text, shown, start)
            if at is None:
                dropped += 1
                continue
            start, end, moved = at, at + len(shown), moved + 1
        mentions.append(SpanMention(start, end, str(item.get("entity_id") or f"{doc_id}#{i}"), item["identifier_type"]))
    return SpanDocument(doc_id, text, tuple(mentions)), moved, dropped


def _nearest(text: str, shown: str, start: int) -> int | None:
    places = [m.start() for m in re.finditer(re.escape(shown), text) if abs(m.start() - start) <= REANCHOR] if shown else []
    return min(places, key=lambda p: abs(p - start)) if places else None


def recall_counts(doc: SpanDocument, output: str) -> dict[str, int]:
    """One rewrite's counts against its document's mentions (see the module docstring)."""
    from privasis_bench.tab.alignment import masked_spans

    covered = bytearray(len(doc.text))
    for start, end in masked_spans(doc.text, output):
        covered[start:end] = b"\x01" * (end - start)
    tokens = masked_tokens = 0
    entity_masked: dict[tuple[str, str], bool] = {}
    for m in doc.mentions:
        words = [(m.start + w.start(), m.start + w.end()) for w in _WORD.finditer(doc.text[m.start:m.end])]
        hidden = [all(covered[a:b]) for a, b in words]
        tokens, masked_tokens = tokens + len(words), masked_tokens + sum(hidden)
        key = (m.identifier, m.entity)
        entity_masked[key] = entity_masked.get(key, True) and all(hidden)
    counts = {"tokens": tokens, "tokens_masked": masked_tokens}
    for kind in TO_MASK:
        flags = [v for (ident, _), v in entity_masked.items() if ident == kind]
        counts[f"{kind.lower()}_entities"], counts[f"{kind.lower()}_entities_masked"] = len(flags), sum(flags)
    return counts


def span_recall(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Token and entity recall pooled over the rows that carry span counts (``spans``), or why there are none."""
    counted = [r["spans"] for r in rows if isinstance(r.get("spans"), dict)]
    if not counted:
        return {"available": False, "reason": "no document of this run has span annotations in the task's data "
                "(SPIA ships them for its 144 TAB and its 151 PANORAMA test documents only)"}
    total = {k: sum(int(c.get(k, 0)) for c in counted) for k in counted[0]}

    def share(num: str, den: str) -> float | None:
        return total[num] / total[den] if total[den] else None

    return {"available": True, "documents": len(counted), "token_recall": share("tokens_masked", "tokens"),
            "direct_entity_recall": share("direct_entities_masked", "direct_entities"),
            "quasi_entity_recall": share("quasi_entities_masked", "quasi_entities"), "counts": total}
