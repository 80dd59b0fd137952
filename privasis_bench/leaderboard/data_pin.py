"""Hub data pinned by content: a digest of every record's scored fields, not only of the record ids.

A local copy of a hub dataset stands in for the pinned revision only when its records hold exactly what was pinned:
each record's digest covers what scoring reads from it (:data:`SCORED_FIELDS`: its id, type and category, whether
and why it is excluded, the document text, both instruction variants, every target and keep attribute with its
name, kind, value and group, and the attribute groups). ``pinned_data.json`` holds, per task, ``content_hash`` (the
sha256 over the ordered record digests) and ``record_digests`` (each record's digest, shortened, by id) so that an
edited copy is refused naming the first record that differs. :func:`pin` makes that entry from a checked copy.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Mapping

from privasis_bench.data.records import Record

#: The record fields a digest covers (what the protocol reads when it scores a record).
SCORED_FIELDS = ("id", "record_type", "category", "excluded_reason", "text", "base_instruction",
                 "smoothed_instruction", "targets", "keep", "groups")
#: Hex characters of a record digest kept in ``record_digests`` (enough to name the record; the content hash is whole).
SHORT = 16


def _scored(record: Record) -> dict[str, Any]:
    return {
        "id": record.id, "record_type": record.record_type, "category": record.category,
        "excluded_reason": record.excluded_reason, "text": record.text, "base_instruction": record.base_instruction,
        "smoothed_instruction": record.smoothed_instruction,
        "targets": [[a.name, a.kind, a.value, a.group] for a in record.targets],
        "keep": [[a.name, a.kind, a.value, a.group] for a in record.keep],
        "groups": record.groups,
    }


def record_digest(record: Record) -> str:
    """sha256 of a record's scored fields as canonical JSON."""
    text = json.dumps(_scored(record), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(records: Iterable[Record]) -> str:
    """sha256 over the ordered digests of ``records``."""
    return hashlib.sha256("\n".join(record_digest(r) for r in records).encode()).hexdigest()


def first_difference(records: Iterable[Record], pinned: Mapping[str, Any]) -> str:
    """A short description of the first record whose digest is not the pinned one (or that the pin lacks)."""
    digests = pinned.get("record_digests") if isinstance(pinned.get("record_digests"), Mapping) else {}
    seen = set()
    for record in records:
        seen.add(record.id)
        want = digests.get(record.id)
        if want is None:
            return f"record {record.id[:80]} is not among the pinned records"
        if record_digest(record)[:SHORT] != want:
            return (f"record {record.id[:80]}: its scored fields (text, instructions, targets, keep attributes, ...) "
                    "differ from the pinned copy")
    missing = sorted(set(digests) - seen)
    if missing:
        return f"record {missing[0][:80]} of the pinned copy is missing"
    return "the records are in another order than the pinned copy"


def pin(records: list[Record], revision: str | None, ids_hash: str) -> dict[str, Any]:
    """The ``pinned_data.json`` entry of a checked local copy."""
    return {"revision": revision, "ids_hash": ids_hash, "content_hash": content_hash(records),
            "record_digests": {r.id: record_digest(r)[:SHORT] for r in records}}
