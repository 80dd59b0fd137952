"""Typed records: what one benchmark row becomes after normalization (protocol §1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

AttributeKind = Literal["drop", "abstract", "keep"]
INSTRUCTION_VARIANTS: tuple[str, ...] = ("base", "smoothed")

EXCLUDED_NO_KEEP = "no_keep_attributes"


@dataclass(frozen=True)
class Attribute:
    """One annotated attribute of a record: a sanitization target or a keep attribute."""

    name: str
    value: Any  # str | list | dict | int | float | None
    kind: AttributeKind
    group: str | None = None

    @property
    def judged(self) -> bool:
        """Null-valued attributes are never judged (they still count in attribute denominators)."""
        return self.value is not None

    @property
    def readable_name(self) -> str:
        """The attribute name as shown to a judge: underscores become spaces."""
        return self.name.replace("_", " ")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "kind": self.kind, "group": self.group}


@dataclass(frozen=True)
class Record:
    """A normalized benchmark record, ready for the model under test and the judge."""

    id: str
    record_type: str
    text: str
    base_instruction: str
    smoothed_instruction: str
    reference_sanitized: str
    targets: tuple[Attribute, ...]
    keep: tuple[Attribute, ...]
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    category: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    excluded_reason: str | None = None

    @property
    def excluded(self) -> bool:
        """True when the record is not scored (protocol §1: no keep attribute)."""
        return self.excluded_reason is not None

    def instruction(self, variant: str = "base") -> str:
        """The user instruction for the chosen variant ("base" or "smoothed")."""
        if variant == "base":
            return self.base_instruction
        if variant == "smoothed":
            return self.smoothed_instruction
        raise ValueError(f"unknown instruction variant {variant!r} (expected one of {INSTRUCTION_VARIANTS})")

    @property
    def breakdown_category(self) -> str:
        """Category used for failure breakdowns: the dataset's category/tag column, else record_type."""
        return self.category or self.record_type

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable view (used in samples files and `data inspect`)."""
        return {
            "id": self.id,
            "record_type": self.record_type,
            "category": self.category,
            "excluded_reason": self.excluded_reason,
            "targets": [a.to_dict() for a in self.targets],
            "keep": [a.to_dict() for a in self.keep],
        }
