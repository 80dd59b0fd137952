"""Verdict dataclasses: what the judge decided for each target, keep attribute and record.

They serialize to plain dicts (samples JSONL, judge checkpoint) and back, so metrics can be
recomputed from files without calling any model.

Each target and keep verdict the judge fills also says which of its judge answers were cut at the answer budget
(``cut_answers``: the names of the answer fields whose call ended with ``finish_reason`` "length"). Verdicts read
from files written before that field existed carry None there, and write nothing for it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Iterable, Literal

#: Where a target's judging stopped. "sanitized" = no tier fired; "null" = null value, not judged;
#: "unjudged" = a judge call failed; "unparseable" = strict mode could not read the compare answer.
TargetTier = Literal["direct", "inference", "proximity", "sanitized", "null", "unjudged", "unparseable"]
LEAK_TIERS: tuple[str, ...] = ("direct", "inference", "proximity")

#: How a keep attribute's verdict was reached.
KeepVia = Literal["verbatim", "judge", "empty_output", "null", "unjudged", "unparseable"]

#: Record status: "judged" enters the metrics; the others are reported and left out.
RecordStatus = Literal["judged", "unjudged", "unparseable"]
#: Statuses whose records enter the metrics. An unparseable record stays scored (every record counts): its unreadable
#: answers decide nothing in its favour (an unparseable target is not sanitized, an unparseable keep attribute not
#: retained), so making an answer off-label can only lower a run's numbers, never move a record out of them.
SCORED_STATUSES: tuple[str, ...] = ("judged", "unparseable")

#: The judge answers a target and a keep verdict may record, by the name of their (cleaned) field.
TARGET_ANSWER_FIELDS: tuple[str, ...] = ("guess", "original_guess", "compare_answer")
KEEP_ANSWER_FIELDS: tuple[str, ...] = ("guess", "inclusion_answer")


class _AttributeVerdict:
    """Serialisation shared by target and keep verdicts: ``cut_answers`` is left out when unknown (None), so older
    rows keep their shape; unknown keys are ignored when reading."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)  # type: ignore[call-overload]
        if data.get("cut_answers") is None:
            data.pop("cut_answers", None)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        return cls(**{f.name: data.get(f.name) for f in fields(cls) if f.name in data})  # type: ignore[arg-type]


@dataclass
class TargetVerdict(_AttributeVerdict):
    """The verdict for one sanitization target (protocol §3)."""

    name: str
    kind: str  # drop | abstract
    group: str | None
    value: Any
    tier: TargetTier = "sanitized"
    guess: str | None = None  # judge guess on the sanitized output (cleaned, lower-cased)
    original_guess: str | None = None  # judge guess on the original record (cleaned, lower-cased)
    compare_answer: str | None = None  # proximity answer (cleaned)
    error: str | None = None
    guess_raw: str | None = None  # what the judge returned, before cleaning
    original_guess_raw: str | None = None
    compare_answer_raw: str | None = None
    cut_answers: list[str] | None = None  # which of TARGET_ANSWER_FIELDS were cut at the budget (None: not recorded)

    @property
    def leaked(self) -> bool | None:
        """True for a leak, False when sanitized, None when null/unjudged/unparseable."""
        if self.tier in LEAK_TIERS:
            return True
        if self.tier == "sanitized":
            return False
        return None


@dataclass
class KeepVerdict(_AttributeVerdict):
    """The verdict for one keep attribute (protocol §4)."""

    name: str
    value: Any
    group: str | None = None
    retained: bool | None = None  # None: null value, unjudged or unparseable
    via: KeepVia = "verbatim"
    guess: str | None = None  # judge guess on the sanitized output (cleaned, lower-cased)
    inclusion_answer: str | None = None  # YES/NO answer (cleaned)
    error: str | None = None
    guess_raw: str | None = None  # what the judge returned, before cleaning
    inclusion_answer_raw: str | None = None
    cut_answers: list[str] | None = None  # which of KEEP_ANSWER_FIELDS were cut at the budget (None: not recorded)


@dataclass
class RecordVerdict:
    """Every verdict for one record, plus what the metrics need to know about it."""

    record_id: str
    category: str
    record_type: str
    output_failed: bool
    targets: list[TargetVerdict] = field(default_factory=list)
    keep: list[KeepVerdict] = field(default_factory=list)

    @property
    def status(self) -> RecordStatus:
        """"unjudged" if any judge call failed, else "unparseable" if a strict answer was unreadable."""
        tiers = [t.tier for t in self.targets] + [k.via for k in self.keep]
        if "unjudged" in tiers:
            return "unjudged"
        if "unparseable" in tiers:
            return "unparseable"
        return "judged"

    def to_dict(self) -> dict[str, Any]:
        return {
            "record_id": self.record_id,
            "category": self.category,
            "record_type": self.record_type,
            "output_failed": self.output_failed,
            "status": self.status,
            "targets": [t.to_dict() for t in self.targets],
            "keep": [k.to_dict() for k in self.keep],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RecordVerdict":
        return cls(
            record_id=data["record_id"],
            category=data.get("category") or "",
            record_type=data.get("record_type") or "",
            output_failed=bool(data.get("output_failed", False)),
            targets=[TargetVerdict.from_dict(t) for t in data.get("targets", [])],
            keep=[KeepVerdict.from_dict(k) for k in data.get("keep", [])],
        )


def verdicts_from_rows(rows: Iterable[dict[str, Any]]) -> list[RecordVerdict]:
    """Rebuild the record verdicts of a samples file (excluded rows carry none and are skipped)."""
    return [RecordVerdict.from_dict(r) for r in rows if r.get("status") != "excluded"]
