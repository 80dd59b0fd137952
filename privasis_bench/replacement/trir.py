"""Text re-identification risk (the paper's §4.2): the accuracy of a re-identification attack on sanitized documents.

An *attacker* learns from background knowledge (:mod:`background`) and names, for each sanitized document, the
individual it believes the document is about (or None: no guess). ``TRIR = correct guesses / attacked documents``.

Two attackers, each recorded with its settings:

- ``classifier`` (the paper's construction, :mod:`classifier`): a language model with a classification head,
  fine-tuned to predict the individual of each background document.
- ``retrieval`` (cheaper): BM25 over each individual's background documents, with the sanitized document as the
  query (the project's linkage retrieval, :func:`privasis_bench.protocol.linkage.retrieve_top`); a tie or a
  zero score is no guess.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from privasis_bench.protocol.linkage import retrieve_top
from privasis_bench.replacement.background import BackgroundDoc


class Attacker(Protocol):
    """What TRIR needs from a re-identification attack."""

    def describe(self) -> dict[str, Any]: ...

    def fit(self, background: Sequence[BackgroundDoc]) -> None: ...

    def predict(self, texts: Sequence[str]) -> list[str | None]: ...


def trir(guesses: Sequence[str | None], truths: Sequence[str]) -> float | None:
    """TRIR: the share of documents whose individual the attack named (None when no document was attacked)."""
    if not truths:
        return None
    return sum(g is not None and g == t for g, t in zip(guesses, truths)) / len(truths)


class RetrievalAttacker:
    """Re-identification by BM25 retrieval over each individual's background documents (joined)."""

    def __init__(self) -> None:
        self.corpus: dict[str, str] = {}

    def describe(self) -> dict[str, Any]:
        """The attack's name and settings (recorded in results)."""
        return {"attacker": "retrieval", "method": "bm25s BM25 (English stop words), top-1, ties are no guess",
                "individuals": len(self.corpus)}

    def fit(self, background: Sequence[BackgroundDoc]) -> None:
        """Index every individual's background text."""
        corpus: dict[str, list[str]] = {}
        for doc in background:
            corpus.setdefault(doc.individual_id, []).append(doc.text)
        self.corpus = {k: "\n".join(v) for k, v in corpus.items()}

    def predict(self, texts: Sequence[str]) -> list[str | None]:
        """The best-matching individual per text (None on a tie or no match)."""
        return [top for top, _ in retrieve_top(self.corpus, list(texts))] if texts else []
