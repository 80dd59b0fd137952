"""Keep evaluation records out of training data: the same id, the same text, or a near-duplicate text.

Texts are compared after normalization (lower-cased word tokens). A near-duplicate shares at least
``threshold`` of the shorter text's word ``n``-grams (containment, so a record embedded in a longer one is
caught too). An inverted index over the evaluation texts' n-grams keeps this linear in the corpus size.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from privasis_bench.data.records import Record

_WORD = re.compile(r"\w+", re.UNICODE)
DEFAULT_NGRAM = 5
DEFAULT_THRESHOLD = 0.5


def normalized_words(text: str) -> list[str]:
    """Lower-cased word tokens (punctuation and spacing ignored)."""
    return _WORD.findall(text.lower())


def shingles(words: list[str], n: int) -> set[int]:
    """Hashes of the word n-grams of a token list (the whole list when it is shorter than n)."""
    if len(words) < n:
        return {hash(tuple(words))} if words else set()
    return {hash(tuple(words[i : i + n])) for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class OverlapHit:
    """Why a record matches an evaluation record: ``id``, ``text`` or ``near_duplicate``."""

    reason: str
    eval_id: str
    score: float = 1.0


@dataclass
class EvalIndex:
    """The evaluation records' ids, normalized texts and n-gram index."""

    n: int = DEFAULT_NGRAM
    threshold: float = DEFAULT_THRESHOLD
    ids: set[str] = field(default_factory=set)
    texts: dict[str, str] = field(default_factory=dict)  # normalized text -> eval id
    sizes: list[int] = field(default_factory=list)
    eval_ids: list[str] = field(default_factory=list)
    postings: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, records: Iterable[Record], *, n: int = DEFAULT_NGRAM, threshold: float = DEFAULT_THRESHOLD) -> "EvalIndex":
        """Index evaluation records."""
        index = cls(n=n, threshold=threshold)
        for record in records:
            index.add(record)
        return index

    def add(self, record: Record) -> None:
        """Add one evaluation record."""
        self.ids.add(record.id)
        words = normalized_words(record.text)
        self.texts.setdefault(" ".join(words), record.id)
        grams = shingles(words, self.n)
        slot = len(self.eval_ids)
        self.eval_ids.append(record.id)
        self.sizes.append(len(grams))
        for gram in grams:
            self.postings.setdefault(gram, []).append(slot)

    def __len__(self) -> int:
        return len(self.eval_ids)

    def match(self, record: Record) -> OverlapHit | None:
        """The first reason ``record`` overlaps the evaluation records (id, exact text, near-duplicate), or None."""
        if record.id in self.ids:
            return OverlapHit("id", record.id)
        words = normalized_words(record.text)
        exact = self.texts.get(" ".join(words))
        if exact is not None:
            return OverlapHit("text", exact)
        grams = shingles(words, self.n)
        if not grams:
            return None
        shared: Counter[int] = Counter()
        for gram in grams:
            for slot in self.postings.get(gram, ()):
                shared[slot] += 1
        best: OverlapHit | None = None
        for slot, count in shared.items():
            score = count / max(1, min(len(grams), self.sizes[slot]))
            if score >= self.threshold and (best is None or score > best.score):
                best = OverlapHit("near_duplicate", self.eval_ids[slot], round(score, 4))
        return best
