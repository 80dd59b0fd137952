"""Reading a TAB JSON release (``echr_train.json``, ``echr_dev.json``, ``echr_test.json`` or a file in that schema).

Every problem is one :class:`~privasis_bench.errors.DataError` line naming the file, the document (position and
``doc_id``), the annotator, the mention and the field, in the spirit of the Privasis loader. The checks are those
the official scorer relies on (offsets inside the text, known identifier types, an entity id used by one annotator
only) plus the types of every field this package reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privasis_bench.errors import DataError
from privasis_bench.fsutil import loads_json, read_text
from privasis_bench.tab.records import IDENTIFIER_TYPES, Mention, TabDocument
from privasis_bench.tab.tokens import MAX_TEXT_CHARS

_REQUIRED_DOC = ("doc_id", "text", "annotations", "dataset_type")
_REQUIRED_MENTION = ("entity_id", "entity_type", "identifier_type", "start_offset", "end_offset")


def load_documents(paths: list[str] | str, *, limit: int | None = None) -> list[TabDocument]:
    """The documents of one or more TAB JSON files, in file order (``limit``: the first N in all)."""
    docs: list[TabDocument] = []
    seen: dict[str, str] = {}
    for path in [paths] if isinstance(paths, str) else paths:
        for doc in _read_file(Path(path)):
            if doc.doc_id in seen:
                raise DataError(f"{path}: doc_id {doc.doc_id!r} appears twice (also in {seen[doc.doc_id]}): "
                                "each document must be listed once")
            seen[doc.doc_id] = str(path)
            docs.append(doc)
            if limit is not None and len(docs) >= limit:
                return docs
    return docs


def _read_file(path: Path) -> list[TabDocument]:
    if not path.exists():
        raise DataError(f"{path}: TAB data file not found; download echr_*.json from "
                        "NorskRegnesentral/text-anonymization-benchmark and pass it with --data-files")
    # the strict reader the Privasis loader uses: lone surrogates, NaN, runaway nesting are one line naming the file
    raw = loads_json(read_text(path, "TAB JSON file"), str(path), unique_keys=True)
    if not isinstance(raw, list):
        raise DataError(f"{path}: expected a JSON list of documents (TAB's echr_*.json format), "
                        f"found a {type(raw).__name__}")
    return [parse_document(item, f"{path}: document {i + 1}") for i, item in enumerate(raw)]


def parse_document(item: Any, where: str) -> TabDocument:
    """One document from its JSON object; ``where`` prefixes every error (file and position)."""
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected a JSON object, found a {type(item).__name__}")
    for key in _REQUIRED_DOC:
        if key not in item:
            raise DataError(f"{where}: missing field {key!r} (a TAB document has {', '.join(_REQUIRED_DOC)})")
    doc_id, text = item["doc_id"], item["text"]
    if not isinstance(doc_id, str) or not doc_id:
        raise DataError(f"{where}: doc_id must be a non-empty string, not {doc_id!r}")
    where = f"{where} (doc_id {doc_id})"
    if not isinstance(text, str) or not text:
        raise DataError(f"{where}: text must be a non-empty string")
    if len(text) > MAX_TEXT_CHARS:
        raise DataError(f"{where}: text has {len(text):,} characters, more than the {MAX_TEXT_CHARS:,} the scorer's "
                        "spaCy tagger reads; split the document")
    annotations = item["annotations"]
    if not isinstance(annotations, dict):
        raise DataError(f"{where}: annotations must be an object annotator -> {{'entity_mentions': [...]}}")
    parsed: dict[str, tuple[Mention, ...]] = {}
    owner: dict[str, str] = {}
    for annotator, body in annotations.items():
        at = f"{where}: annotator {annotator!r}"
        if not isinstance(body, dict) or not isinstance(body.get("entity_mentions"), list):
            raise DataError(f"{at}: expected an object with an 'entity_mentions' list")
        mentions = tuple(_mention(m, f"{at}: mention {j + 1}", text) for j, m in enumerate(body["entity_mentions"]))
        for m in mentions:
            if owner.setdefault(m.entity_id, annotator) != annotator:
                raise DataError(f"{at}: entity_id {m.entity_id!r} is also used by annotator {owner[m.entity_id]!r}; "
                                "entity ids must be unique per annotator (TAB's convention)")
        parsed[str(annotator)] = mentions
    for key, kind in (("task", str), ("meta", dict), ("dataset_type", str)):
        if item.get(key) is not None and not isinstance(item[key], kind):
            raise DataError(f"{where}: {key} must be a {kind.__name__}, not {type(item[key]).__name__}")
    checked = item.get("quality_checked") or []
    if isinstance(checked, str):
        checked = [checked]
    if not isinstance(checked, (list, bool)):
        raise DataError(f"{where}: quality_checked must be a list of annotator names")
    return TabDocument(doc_id=doc_id, text=text, dataset_type=item["dataset_type"], annotations=parsed,
                       task=item.get("task") or "", meta=dict(item.get("meta") or {}),
                       quality_checked=tuple(str(a) for a in checked) if isinstance(checked, list) else ())


def _mention(m: Any, where: str, text: str) -> Mention:
    if not isinstance(m, dict):
        raise DataError(f"{where}: expected a JSON object")
    for key in _REQUIRED_MENTION:
        if key not in m:
            raise DataError(f"{where}: missing field {key!r}")
    where = f"{where} ({m.get('entity_mention_id') or m['entity_id']})"
    start, end = m["start_offset"], m["end_offset"]
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool) or isinstance(end, bool):
        raise DataError(f"{where}: start_offset and end_offset must be integers")
    if start < 0 or end > len(text) or start >= end:
        raise DataError(f"{where}: offsets [{start}, {end}) are not a non-empty span of the text "
                        f"({len(text)} characters)")
    if m["identifier_type"] not in IDENTIFIER_TYPES:
        raise DataError(f"{where}: identifier_type must be one of {', '.join(IDENTIFIER_TYPES)}, "
                        f"not {m['identifier_type']!r}")
    related = m.get("related_mentions") or []
    if not isinstance(related, list):
        raise DataError(f"{where}: related_mentions must be a list of mention ids")
    return Mention(entity_mention_id=str(m.get("entity_mention_id") or ""), entity_id=str(m["entity_id"]),
                   entity_type=str(m["entity_type"]), start_offset=start, end_offset=end,
                   span_text=str(m.get("span_text", text[start:end])), identifier_type=m["identifier_type"],
                   confidential_status=str(m.get("confidential_status") or "NOT_CONFIDENTIAL"),
                   edit_type=m.get("edit_type"), related_mentions=tuple(str(r) for r in related))
