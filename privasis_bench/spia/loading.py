"""Reading SPIA's JSON Lines files strictly: a bad row is one error naming the file, the line and the field.

Each line is one document: ``{"metadata": {"data_id", "number_of_subjects", "annotator"}, "text", "subjects":
[{"id", "description", "PIIs": [{"tag", "keyword", "certainty", "hardness"}, ...]}]}``. Every subject must carry
each of the 15 tag slots (a tag may hold several values, one slot each); certainty and hardness are integers from 0 to 5; ids are unique in a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from privasis_bench.errors import DataError
from privasis_bench.spia.records import TAGS, Attribute, SpiaDocument, Subject


class _RowError(ValueError):
    """A problem in one row; the reader adds the file and line."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _RowError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _field(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise _RowError(f"{where}: expected an object")
    if key not in obj:
        raise _RowError(f"{where}.{key}: missing")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise _RowError(f"{where}.{key}: expected {names}, got {type(value).__name__}")
    return value


def _level(obj: dict[str, Any], key: str, where: str) -> int:
    value = _field(obj, key, int, where)
    if not 0 <= value <= 5:
        raise _RowError(f"{where}.{key}: {value} is outside 0-5")
    return value


def _subject(raw: Any, where: str) -> Subject:
    sid = _field(raw, "id", int, where)
    description = _field(raw, "description", str, where)
    piis = _field(raw, "PIIs", list, where)
    attributes: list[Attribute] = []
    for j, pii in enumerate(piis):
        at = f"{where}.PIIs[{j}]"
        tag = _field(pii, "tag", str, at)
        if tag not in TAGS:
            raise _RowError(f"{at}.tag: unknown tag {tag[:40]!r}")
        attributes.append(Attribute(tag=tag, keyword=_field(pii, "keyword", str, at),
                                    certainty=_level(pii, "certainty", at), hardness=_level(pii, "hardness", at)))
    present = {a.tag for a in attributes}
    missing = [t for t in TAGS if t not in present]
    if missing:
        raise _RowError(f"{where}.PIIs: missing tag slot(s) {', '.join(missing)}")
    return Subject(id=sid, description=description, attributes=tuple(attributes))


def parse_document(line: str) -> SpiaDocument:
    """One document from one JSON line (raises ValueError with the field's path)."""
    try:
        raw = json.loads(line, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise _RowError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    metadata = _field(raw, "metadata", dict, "row")
    doc_id = _field(metadata, "data_id", str, "metadata")
    if not doc_id.strip():
        raise _RowError("metadata.data_id: empty")
    text = _field(raw, "text", str, "row")
    subjects = [_subject(s, f"subjects[{i}]") for i, s in enumerate(_field(raw, "subjects", list, "row"))]
    ids = [s.id for s in subjects]
    if len(set(ids)) != len(ids):
        raise _RowError("subjects: two subjects share an id")
    declared = metadata.get("number_of_subjects")
    if declared is not None and declared != len(subjects):
        raise _RowError(f"metadata.number_of_subjects: says {declared!r}, the row has {len(subjects)}")
    annotator = metadata.get("annotator", "")
    return SpiaDocument(id=doc_id, text=text, subjects=tuple(subjects),
                        annotator=annotator if isinstance(annotator, str) else "")


def iter_documents(path: str | Path) -> Iterator[SpiaDocument]:
    """Every document of a SPIA JSONL file, in file order; a bad row raises DataError naming file, line, field."""
    path = Path(path)
    seen: set[str] = set()
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read the SPIA file ({exc.strerror or exc})") from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    doc = parse_document(line)
                except (ValueError, RecursionError) as exc:
                    raise DataError(f"{path}:{number}: {exc}") from None
                if doc.id in seen:
                    raise DataError(f"{path}:{number}: metadata.data_id: {doc.id!r} appears on an earlier line")
                seen.add(doc.id)
                yield doc
        except UnicodeDecodeError:
            raise DataError(f"{path}: not UTF-8 text") from None


def load_documents(path: str | Path, limit: int | None = None) -> list[SpiaDocument]:
    """The documents of a SPIA file (the first ``limit`` of them when given)."""
    docs: list[SpiaDocument] = []
    for doc in iter_documents(path):
        if limit is not None and len(docs) >= limit:
            break
        docs.append(doc)
    return docs
