"""Information content of text spans (the paper's §4.1.1, Eqs. 3-5) and the corpus-frequency estimator.

``IC(t) = -log Pr(t)``; a document's text information content ``TIC(D)`` is the sum of its spans' IC, and a span's
relative information content ``RIC(t, D) = IC(t) / TIC(D)``. ``Pr(t)`` comes from an *estimator*: an object with
``name`` (recorded with every number it produced), ``describe()`` and ``probabilities(text, spans)``. For a span of
several words the least likely word decides (the paper's rule for multi-token spans).

:class:`WordFrequencyEstimator` is the paper's corpus-frequency alternative: the probability of a word is its
frequency in the ``wordfreq`` package's English word lists (no context, nothing to download). A word the lists do
not know gets the floor frequency ``FLOOR``; a span without any word (punctuation) has probability 1 (IC 0).
"""

from __future__ import annotations

import math
from typing import Any, Protocol, Sequence

from privasis_bench.errors import PrivasisError

#: Frequency given to words the word lists do not know (about one in a billion words).
FLOOR = 1e-9


class Estimator(Protocol):
    """What TPS needs to know about span probabilities."""

    name: str

    def describe(self) -> dict[str, Any]: ...

    def probabilities(self, text: str, spans: Sequence[tuple[int, int]]) -> list[float]: ...


def information_content(probability: float) -> float:
    """Eq. 3: ``IC(t) = -log Pr(t)`` (natural log; a probability of 0 is clipped to :data:`FLOOR`)."""
    return -math.log(min(1.0, max(probability, FLOOR)))


def text_information_content(ics: Sequence[float]) -> float:
    """Eq. 4: ``TIC(D)``, the sum of the IC of every span of the document."""
    return float(sum(ics))


def relative_information_content(ic: float, tic: float) -> float:
    """Eq. 5: ``RIC(t, D) = IC(t) / TIC(D)`` (0 for a document without information, TIC = 0)."""
    return ic / tic if tic > 0 else 0.0


class WordFrequencyEstimator:
    """``Pr(t)`` from word frequencies in a corpus (``wordfreq``'s English lists): the least frequent word of the span."""

    def __init__(self, language: str = "en", wordlist: str = "best") -> None:
        try:
            import wordfreq
        except ImportError:
            raise PrivasisError("information_content: wordfreq needs the wordfreq package: "
                                "pip install 'privasis-bench[replacement]'") from None
        self._wf = wordfreq
        self.language, self.wordlist = language, wordlist
        self.name = f"wordfreq:{language}/{wordlist}"

    def describe(self) -> dict[str, Any]:
        """What produced the probabilities (recorded in results)."""
        import importlib.metadata as md

        return {"estimator": "corpus word frequency", "name": self.name, "package": "wordfreq",
                "version": md.version("wordfreq"), "floor": FLOOR, "multi_word": "least frequent word"}

    def word_probability(self, word: str) -> float:
        """The frequency of one word (at least :data:`FLOOR`)."""
        return max(self._wf.word_frequency(word, self.language, wordlist=self.wordlist), FLOOR)

    def probabilities(self, text: str, spans: Sequence[tuple[int, int]]) -> list[float]:
        """``Pr`` of each span of ``text``: the probability of its least frequent word (1 when it has no word)."""
        out = []
        for start, end in spans:
            words = self._wf.tokenize(text[start:end], self.language)
            out.append(min((self.word_probability(w) for w in words), default=1.0))
        return out
