"""TPS as the paper authors' code computes it (``tps_variant: authors_code``), beside the paper's text (:mod:`tps`).

The code the paper links (``IldikoPilan/text_sanitization``, ``eval_TPS.py``) departs from the paper's equations in
three ways, all reproduced here:

1. **Terms.** Every token of the original document that is not white space is weighed, stop words and punctuation
   included (:func:`~privasis_bench.replacement.terms.authors_terms`), not only entities, noun phrases and content
   words.
2. **Edited spans are not terms.** The term set comes from the original text alone; an edit marks every term it
   overlaps as edited (similarity 0, suppressed) instead of being weighed as one span of its own.
3. **Replacement similarity at the ends.** A replacement's similarity ``max(0, cos)`` (computed for every
   replacement, with no same-text shortcut) goes only to the terms that contain the edit's first or last
   character; a term strictly inside a long edit keeps similarity 0.

Two behaviours of that code are bugs and are reproduced only on request (``reproduce_bugs``), never by default:

- ``tps_span_at_end_dropped``: an edited run of characters that reaches the end of the document is never closed,
  so it is ignored (its terms count as unedited: suppressing the whole text scores 1.0).
- ``tps_inner_terms_unedited``: a term is counted as edited only when an edited run starts or ends inside it, so
  terms strictly inside a long edit count as unedited (similarity 1).
"""

from __future__ import annotations

from typing import Any, Sequence

from privasis_bench.replacement.information import (
    Estimator,
    information_content,
    relative_information_content,
    text_information_content,
)
from privasis_bench.replacement.pairs import Pair
from privasis_bench.replacement.terms import Segmenter, Span
from privasis_bench.replacement.tps import DocumentTPS, text_preserved_similarity

#: The authors' code's bugs that ``reproduce_bugs`` may name for TPS.
TPS_BUGS = ("tps_span_at_end_dropped", "tps_inner_terms_unedited")


def edited_runs(length: int, edits: Sequence[Span], span_at_end_dropped: bool = False) -> list[Span]:
    """The maximal runs of edited characters (overlapping or touching edits merge); with the bug, a run that
    reaches ``length`` (the end of the document) is left out."""
    runs: list[list[int]] = []
    for start, end in sorted((max(0, s), min(length, e)) for s, e in edits):
        if end <= start:
            continue
        if runs and start <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], end)
        else:
            runs.append([start, end])
    return [(s, e) for s, e in runs if not (span_at_end_dropped and e >= length)]


def term_edited(term: Span, runs: Sequence[Span], inner_terms_unedited: bool = False) -> bool:
    """Whether an edited run touches ``term``: any overlap, or with the bug only a run starting or ending inside it."""
    start, end = term
    if inner_terms_unedited:
        return any(start <= a < end or start < b <= end for a, b in runs)
    return any(a < end and b > start for a, b in runs)


def touches_ends(term: Span, edit: Span) -> bool:
    """True when ``term`` contains the first or the last character of ``edit``."""
    (start, end), (a, b) = term, edit
    return start <= a < end or start < b <= end


def term_similarities(terms: Sequence[Span], pairs: Sequence[Pair], cosines: Sequence[float], length: int,
                      bugs: Sequence[str] = ()) -> list[float]:
    """Each term's similarity: 1 if unedited, 0 if edited, and the clipped cosine of a replacement for the terms
    touching its ends (``cosines`` holds one value per pair with a non-empty replacement, in order; the last
    replacement touching a term wins)."""
    runs = edited_runs(length, [(p.start, p.end) for p in pairs], "tps_span_at_end_dropped" in bugs)
    sims = [0.0 if term_edited(t, runs, "tps_inner_terms_unedited" in bugs) else 1.0 for t in terms]
    replaced = [p for p in pairs if p.replacement != ""]
    for pair, cosine in zip(replaced, cosines):
        for i, term in enumerate(terms):
            if touches_ends(term, (pair.start, pair.end)):
                sims[i] = max(0.0, min(1.0, float(cosine)))
    return sims


def document_tps_authors(text: str, pairs: Sequence[Pair], estimator: Estimator, similarity_model: Any,
                         segmenter: Segmenter, bugs: Sequence[str] = ()) -> DocumentTPS:
    """TPS of one sanitized document as the authors' code computes it (``segmenter``: the authors' term set).

    ``tps`` is None for a document without information content (TIC = 0)."""
    terms = segmenter(text)
    ics = [information_content(p) for p in estimator.probabilities(text, terms)]
    tic = text_information_content(ics)
    replaced = [p for p in pairs if p.replacement != ""]
    measure = getattr(similarity_model, "cosines", similarity_model.similarities)
    cosines = measure([(p.original, p.replacement) for p in replaced]) if replaced else []
    sims = term_similarities(terms, pairs, cosines, len(text), bugs)
    value = (text_preserved_similarity([relative_information_content(ic, tic) for ic in ics], sims)
             if tic > 0 else None)
    cos_of = {id(p): c for p, c in zip(replaced, cosines)}
    edited = [{**p.to_dict(), "similarity": (max(0.0, min(1.0, float(cos_of[id(p)]))) if id(p) in cos_of else 0.0),
               "terms_at_ends": sum(touches_ends(t, (p.start, p.end)) for t in terms)} for p in pairs]
    return DocumentTPS(value, tic, len(terms), edited)
