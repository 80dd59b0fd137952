"""Text preserved similarity (the paper's §4.1.3, Eq. 7).

``TPS(D, D') = sum_i RIC(t_i, D) * SIMILARITY(t_i, c_i)`` over every text span ``t_i`` of the original document,
``c_i`` being its replacement in the sanitized document (the span itself when it was not edited: similarity 1).
It is 1 when nothing was changed and 0 when every span lost all its meaning. A run's TPS is the mean over its
documents, with a bootstrap interval over documents. This is the default; how the paper authors' code computes
TPS instead (``tps_variant: authors_code``) is :mod:`privasis_bench.replacement.tps_authors`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from privasis_bench.replacement.information import (
    Estimator,
    information_content,
    relative_information_content,
    text_information_content,
)
from privasis_bench.replacement.pairs import Pair
from privasis_bench.replacement.similarity import SentenceModel
from privasis_bench.replacement.terms import Segmenter, document_spans


def text_preserved_similarity(rics: Sequence[float], similarities: Sequence[float]) -> float:
    """Eq. 7: the RIC-weighted sum of the spans' similarities."""
    return float(sum(r * s for r, s in zip(rics, similarities)))


@dataclass
class DocumentTPS:
    """One document's TPS and what it was computed from (kept in its samples row, so it can be rescored)."""

    tps: float | None
    tic: float
    spans: int
    edited: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The samples-row form."""
        return {"tps": self.tps, "tic": self.tic, "spans": self.spans, "edited": self.edited}


def document_tps(text: str, pairs: Sequence[Pair], estimator: Estimator, similarity_model: SentenceModel,
                 segmenter: Segmenter) -> DocumentTPS:
    """TPS of one sanitized document: its spans (edited ones first), their RIC, and the edited spans' similarity.

    ``tps`` is None for a document without information content (TIC = 0)."""
    spans = document_spans(text, [(p.start, p.end) for p in pairs], segmenter)
    ics = [information_content(p) for p in estimator.probabilities(text, spans)]
    tic = text_information_content(ics)
    ic_of = dict(zip(spans, ics))
    sims = similarity_model.similarities([(p.original, p.replacement) for p in pairs])
    sim_of = {(p.start, p.end): s for p, s in zip(pairs, sims)}
    rics = [relative_information_content(ic, tic) for ic in ics]
    value = text_preserved_similarity(rics, [sim_of.get(s, 1.0) for s in spans]) if tic > 0 else None
    edited = [{**p.to_dict(), "ic": ic_of[(p.start, p.end)], "similarity": sim_of[(p.start, p.end)]} for p in pairs]
    return DocumentTPS(value, tic, len(spans), edited)
