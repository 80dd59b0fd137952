"""SPIA's documents, subjects and attribute slots as typed records."""

from __future__ import annotations

from dataclasses import dataclass

#: The five tags whose values are codes (identifiers, numbers, e-mail); the adversary profiles them in one call.
CODE_TAGS: tuple[str, ...] = ("IDENTIFICATION_NUMBER", "DRIVER_LICENSE_NUMBER", "PHONE_NUMBER", "PASSPORT_NUMBER",
                              "EMAIL_ADDRESS")
#: The ten descriptive tags (profiled in the other call).
NON_CODE_TAGS: tuple[str, ...] = ("NAME", "SEX", "AGE", "LOCATION", "NATIONALITY", "EDUCATION", "RELATIONSHIP",
                                  "OCCUPATION", "AFFILIATION", "POSITION")
#: Every slot a subject carries, in the order of the data files.
TAGS: tuple[str, ...] = ("NAME", *CODE_TAGS, *NON_CODE_TAGS[1:])
#: A gold attribute is counted by CPR and IPR when its certainty is at least this.
MIN_CERTAINTY = 3


@dataclass(frozen=True)
class Attribute:
    """One tag slot of one subject: the value (empty when absent), how sure and how hard to infer (0-5)."""

    tag: str
    keyword: str
    certainty: int
    hardness: int


@dataclass(frozen=True)
class Subject:
    """A person of a document, with the description that tells the annotators which person it is."""

    id: int
    description: str
    attributes: tuple[Attribute, ...]

    def values(self, tag: str) -> tuple[Attribute, ...]:
        """The gold values of one tag that hold a keyword (a tag may hold several, e.g. two locations)."""
        return tuple(a for a in self.attributes if a.tag == tag and a.keyword)

    def tags_with_values(self) -> tuple[str, ...]:
        """The tags that hold at least one value, in the data's tag order."""
        return tuple(t for t in TAGS if self.values(t))


@dataclass(frozen=True)
class SpiaDocument:
    """One SPIA document: its hashed id, text and annotated subjects."""

    id: str
    text: str
    subjects: tuple[Subject, ...]
    annotator: str = ""
