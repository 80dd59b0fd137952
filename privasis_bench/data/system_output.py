"""What a system produced for one record, as span scorers read it (the text, and the spans it reports masking)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class SystemOutput:
    """A system's output for one record: its text, the character spans of the input it reports masking (None when
    it does not know them: a free-form rewrite), or the error that left it without output."""

    text: str | None
    spans: Sequence[Sequence[int]] | None = None
    error: str | None = None
    #: What the system wrote in place of each of ``spans`` (same order), when it says (the de-identification tools).
    replacements: Sequence[str] | None = None
