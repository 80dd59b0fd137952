"""Typed TAB documents: a court-style text, its task line, and each annotator's entity mentions.

The field names are TAB's own (``echr_*.json``): a mention has character offsets into ``text`` (end exclusive),
an entity id shared by the mentions of one entity (unique per annotator), an entity type, an identifier type
(DIRECT, QUASI or NO_MASK) and a confidential status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

ENTITY_TYPES = ("PERSON", "CODE", "LOC", "ORG", "DEM", "DATETIME", "QUANTITY", "MISC")
IDENTIFIER_TYPES = ("DIRECT", "QUASI", "NO_MASK")
#: Confidential categories named in TAB's guidelines (NOT_CONFIDENTIAL when none applies).
CONFIDENTIAL_STATUSES = ("NOT_CONFIDENTIAL", "BELIEF", "POLITICS", "SEX", "ETHNIC", "HEALTH")
_TASK_PERSON = re.compile(r"anonymi[sz]e the following (?:person|individual)s?\s*:\s*(.+?)\s*$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Mention:
    """One annotated entity mention (offsets are characters of the document text, end exclusive)."""

    entity_mention_id: str
    entity_id: str
    entity_type: str
    start_offset: int
    end_offset: int
    span_text: str
    identifier_type: str
    confidential_status: str = "NOT_CONFIDENTIAL"
    edit_type: str | None = None
    related_mentions: tuple[str, ...] = ()

    @property
    def needs_masking(self) -> bool:
        """DIRECT and QUASI mentions are to be masked; NO_MASK ones are not."""
        return self.identifier_type in ("DIRECT", "QUASI")

    def to_dict(self) -> dict[str, Any]:
        """The mention in TAB's JSON form."""
        out: dict[str, Any] = {
            "entity_mention_id": self.entity_mention_id, "entity_id": self.entity_id, "entity_type": self.entity_type,
            "start_offset": self.start_offset, "end_offset": self.end_offset, "span_text": self.span_text,
            "identifier_type": self.identifier_type, "confidential_status": self.confidential_status,
        }
        if self.edit_type is not None:
            out["edit_type"] = self.edit_type
        if self.related_mentions:
            out["related_mentions"] = list(self.related_mentions)
        return out


@dataclass(frozen=True)
class TabDocument:
    """A TAB document with every annotator's mentions (``annotations``: annotator -> mentions)."""

    doc_id: str
    text: str
    dataset_type: str
    annotations: dict[str, tuple[Mention, ...]]
    task: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    quality_checked: tuple[str, ...] = ()

    @property
    def annotators(self) -> tuple[str, ...]:
        """Annotator names, in file order."""
        return tuple(self.annotations)

    @property
    def person(self) -> str:
        """The person to protect: the name after the task line's colon, else ``meta.applicant``, else ''."""
        found = _TASK_PERSON.search(self.task or "")
        if found:
            return found.group(1)
        return str(self.meta.get("applicant") or "")

    def to_dict(self) -> dict[str, Any]:
        """The document in TAB's JSON form."""
        return {
            "annotations": {a: {"entity_mentions": [m.to_dict() for m in ms]} for a, ms in self.annotations.items()},
            "dataset_type": self.dataset_type, "doc_id": self.doc_id, "meta": dict(self.meta),
            "quality_checked": list(self.quality_checked), "task": self.task, "text": self.text,
        }
