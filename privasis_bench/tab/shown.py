"""Spans derived, not claimed: what a span masker's output no longer shows, inside the spans it reports.

A span masker (Presidio, the regex scrubber, ``intact:``) reports the character spans it replaced. A report is a
claim; the output is the evidence. A reported span counts as masked only where the output no longer shows the
original's words:

1. **In place.** The document's tokens are aligned with the output's (case-insensitive Levenshtein opcodes on word
   and punctuation tokens, as :mod:`privasis_bench.tab.alignment` does); a word in an *equal* block is shown, whatever
   the spans say. This does not depend on the reported spans, so no choice of spans can hide it.
2. **In its replacement.** The reported spans split the document into kept stretches (outside every span) and spans;
   the kept stretches are found in the output in order, and what the output holds between two of them is the
   replacement of the span between (:func:`span_replacements`). A word of the span that its replacement still holds
   (aligned equal, or reused elsewhere in it) is shown. When the stretches cannot be found, step 1 alone decides.
3. A span none of whose words is shown counts exactly as reported. Otherwise it is cut at the shown words; each
   remaining run of tokens counts from its first word's start to its last word's end (a run without a word is
   dropped). Punctuation shown again discloses nothing (a replacement date's hyphens do not cut a span).

So one span over the whole document counts only what the output changed, and a span widened over mentions the
output still shows counts only the part it really replaced; an honest masker's spans come back unchanged (every
seeded span masker's, checked). The words a rewrite *moves* are the alignment's business (its reuse rule) and are not
looked for outside a span's own replacement here: a masker's output keeps the document's order.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from privasis_bench.tab.alignment import tokenize

Span = tuple[int, int]

def span_replacements(text: str, spans: Sequence[Sequence[int]], output: str) -> list[str] | None:
    """What ``output`` holds in place of each of ``spans`` (sorted, disjoint, in bounds), or None when the document's
    text outside the spans is not found in the output in order."""
    pos, prev_end, found_spans = 0, 0, []
    for i, (start, end) in enumerate(spans):
        keep = text[prev_end:start]
        at = output.find(keep, pos)
        if at < 0 or (i == 0 and at != 0):
            return None
        found_spans.append(at + len(keep))
        pos, prev_end = at + len(keep), end
    tail = text[prev_end:]
    if not output.endswith(tail) or len(output) - len(tail) < pos:
        return None
    out: list[str] = []
    for i, (start, end) in enumerate(spans):
        begin = found_spans[i]
        stop = (found_spans[i + 1] - (spans[i + 1][0] - end)) if i + 1 < len(spans) else len(output) - len(tail)
        out.append(output[begin:max(begin, stop)])
    return out


def shown_spans(text: str, spans: Sequence[Sequence[int]], output: str) -> list[Span]:
    """The parts of the reported ``spans`` that ``output`` no longer shows (see the module docstring)."""
    ordered = sorted((int(s), int(e)) for s, e in spans if int(e) > int(s))
    if not ordered:
        return []
    from rapidfuzz.distance import Levenshtein

    tokens, out_forms = tokenize(text), [t[2] for t in tokenize(output)]
    shown = bytearray(len(text) + 1)  # characters of words the output still shows
    for op in Levenshtein.opcodes([t[2] for t in tokens], out_forms):
        for start, end, form in tokens[op.src_start:op.src_end] if op.tag == "equal" else []:
            if _is_word(form):
                shown[start:end] = b"\x01" * (end - start)
    valid = all(0 <= s < e <= len(text) for s, e in ordered) and all(
        a[1] <= b[0] for a, b in zip(ordered, ordered[1:]))
    replacements = span_replacements(text, ordered, output) if valid else None
    for k, (start, end) in enumerate(ordered if replacements is not None else []):
        for s, e in _shown_in_replacement(text, start, end, replacements[k]):
            shown[s:e] = b"\x01" * (e - s)
    out: list[Span] = []
    for start, end in ordered:
        inside = [t for t in tokens if t[0] < end and t[1] > start]
        if not any(shown[max(t[0], start):min(t[1], end)].count(1) for t in inside):
            out.append((start, end))
            continue
        run: list[tuple[int, int, str]] = []
        for tok in inside + [None]:
            if tok is not None and not (_is_word(tok[2]) and shown[max(tok[0], start):min(tok[1], end)].count(1)):
                run.append(tok)
                continue
            words = [t for t in run if _is_word(t[2])]
            if words:
                out.append((max(words[0][0], start), min(words[-1][1], end)))
            run = []
    return out


def _shown_in_replacement(text: str, start: int, end: int, replacement: str) -> list[Span]:
    """Character ranges of the words of ``text[start:end]`` that its ``replacement`` still shows (aligned equal, or
    reused elsewhere in the replacement)."""
    from rapidfuzz.distance import Levenshtein

    a = [(s + start, e + start, f) for s, e, f in tokenize(text[start:end])]
    b_forms = [t[2] for t in tokenize(replacement)]
    a_forms = [t[2] for t in a]
    shown: list[int] = []
    unaligned: Counter = Counter()
    candidates: list[int] = []
    for op in Levenshtein.opcodes(a_forms, b_forms):
        if op.tag == "equal":
            shown.extend(range(op.src_start, op.src_end))
        else:
            candidates.extend(range(op.src_start, op.src_end))
            unaligned.update(b_forms[op.dest_start:op.dest_end])
    for i in candidates:
        if unaligned[a_forms[i]] > 0:
            unaligned[a_forms[i]] -= 1
            shown.append(i)
    return [(a[i][0], a[i][1]) for i in shown if _is_word(a_forms[i])]


def _is_word(form: str) -> bool:
    return form[0].isalnum() or form[0] == "_"


def reported_spans(row: dict) -> object:
    """The spans a samples row says its system reported: ``reported_spans`` when the scored ``masked_spans`` were cut
    from them, else ``masked_spans`` itself."""
    return row.get("reported_spans", row.get("masked_spans"))


def scored_spans(text: str, spans: Sequence[Sequence[int]], output: str) -> list[Span]:
    """The spans a span masker is scored on: its reported ``spans`` as given when the output shows none of their
    words, else :func:`shown_spans` (the scorer and the board's verifier both call this)."""
    given = [(int(s), int(e)) for s, e in spans]
    derived = shown_spans(text, given, output)
    return given if derived == sorted(s for s in given if s[1] > s[0]) else derived
