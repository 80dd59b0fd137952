"""Aligning a free-form rewrite back to the original text, to get the character spans it masked.

A sanitizer that rewrites (an instruction-following model) does not say what it replaced. We recover it in three
steps, documented in docs/tab.md:

1. Both texts are split into tokens: runs of word characters, and single other non-space characters.
2. The two token sequences (compared case-insensitively) are aligned by Levenshtein edit operations (rapidfuzz):
   an original token in an *equal* block is kept; one in a *replace* or *delete* block is a masking candidate.
3. Moved or reused words are not masked: a candidate word token whose form also occurs among the rewrite's
   unaligned tokens (those of *insert* and *replace* blocks) is kept, each such rewrite token accounting for one
   original token. A sentence moved elsewhere, or a name kept inside a paraphrase, therefore still counts as
   disclosed; a name replaced by a placeholder or a vaguer phrase counts as masked.

Consecutive masked tokens become one span, from the first masked word's start to the last masked word's end
(punctuation alone, or at the edges of a run, is not a span: it would only add empty units to mention precision).
"""

from __future__ import annotations

import re
from collections import Counter

ALIGNMENT_METHOD = "word-levenshtein-opcodes+reuse/1"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[tuple[int, int, str]]:
    """(start, end, casefolded form) of every token of ``text``."""
    return [(m.start(), m.end(), m.group(0).casefold()) for m in _TOKEN.finditer(text)]


def masked_spans(original: str, rewrite: str) -> list[tuple[int, int]]:
    """Character spans of ``original`` that ``rewrite`` no longer contains (see the module docstring)."""
    from rapidfuzz.distance import Levenshtein

    a, b = tokenize(original), tokenize(rewrite)
    a_forms, b_forms = [t[2] for t in a], [t[2] for t in b]
    candidates: list[int] = []
    unaligned: Counter = Counter()
    for op in Levenshtein.opcodes(a_forms, b_forms):
        if op.tag in ("replace", "delete"):
            candidates.extend(range(op.src_start, op.src_end))
        if op.tag in ("replace", "insert"):
            unaligned.update(b_forms[op.dest_start:op.dest_end])
    masked: list[int] = []
    for i in candidates:
        form = a_forms[i]
        if _is_word(form):
            if unaligned[form] > 0:
                unaligned[form] -= 1
                continue
        masked.append(i)
    runs: list[list[int]] = []
    for i in sorted(masked):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    spans: list[tuple[int, int]] = []
    for run in runs:
        words = [i for i in run if _is_word(a_forms[i])]
        if words:  # punctuation only at a run's edges or alone is not a masked span
            spans.append((a[words[0]][0], a[words[-1]][1]))
    return spans


def _is_word(form: str) -> bool:
    return form[0].isalnum() or form[0] == "_"
