"""Span <-> replacement pairs: which original span became which text of the sanitized document.

The spans come from the sanitizer when it reports them (``span_source: system``; masking systems and ``intact:``
do), else from aligning the output with the original by TAB's word alignment (``span_source: alignment``,
:func:`privasis_bench.tab.alignment.masked_spans`). A saved predictions file may also give the replacements
themselves (``span_source: predictions``).

Given the spans, each one's replacement is read off the output: the original's tokens *outside* every span are
aligned with the output's tokens (Levenshtein edit operations over TAB's tokens, case-insensitive); a span's
replacement is the output text between the output token aligned with the nearest aligned original token before
the span and the one aligned with the nearest after it (the output's start or end when there is none). Spans with
nothing but white space between them are one span. A suppressed span gets the empty replacement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from privasis_bench.tab.alignment import masked_spans, tokenize
from privasis_bench.tab.spans import merge_spans

PAIRING_METHOD = "outside-token-levenshtein/1"


@dataclass(frozen=True)
class Pair:
    """One edited span of the original (character offsets, its text) and what replaced it."""

    start: int
    end: int
    original: str
    replacement: str

    def to_dict(self) -> dict[str, object]:
        """The pair as a samples-row object."""
        return {"start": self.start, "end": self.end, "original": self.original, "replacement": self.replacement}


def joined_spans(text: str, spans: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """Sorted spans, overlapping ones merged and those separated only by white space joined."""
    out: list[tuple[int, int]] = []
    for start, end in merge_spans(spans):
        if out and not text[out[-1][1]:start].strip():
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def replacement_pairs(original: str, output: str, spans: Sequence[Sequence[int]]) -> list[Pair]:
    """The pair of every (joined) span, its replacement read off ``output`` (see the module docstring)."""
    from rapidfuzz.distance import Levenshtein

    spans = joined_spans(original, spans)
    if not spans:
        return []
    a, b = tokenize(original), tokenize(output)
    inside = bytearray(len(original) + 1)
    for start, end in spans:
        inside[start:end] = b"\x01" * (end - start)
    outside = [t for t in a if not any(inside[t[0]:t[1]])]
    aligned: dict[int, int] = {}
    for op in Levenshtein.opcodes([t[2] for t in outside], [t[2] for t in b]):
        if op.tag == "equal":
            aligned.update(zip(range(op.src_start, op.src_end), range(op.dest_start, op.dest_end)))
    pairs = []
    for start, end in spans:
        before = [i for i, t in enumerate(outside) if t[1] <= start and i in aligned]
        after = [i for i, t in enumerate(outside) if t[0] >= end and i in aligned]
        lo = b[aligned[before[-1]]][1] if before else 0
        hi = b[aligned[after[0]]][0] if after else len(output)
        replacement = output[lo:hi].strip() if hi > lo else ""
        pairs.append(Pair(start, end, original[start:end], replacement))
    return pairs


def aligned_pairs(original: str, output: str) -> list[Pair]:
    """Pairs for a free-form rewrite: TAB's alignment finds the edited spans, then :func:`replacement_pairs`."""
    return replacement_pairs(original, output, masked_spans(original, output))
