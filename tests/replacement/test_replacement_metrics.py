"""Each equation of the paper pinned on hand-computed small cases: IC, TIC, RIC, SIMILARITY, TPS, TRIR, NMI."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privasis_bench.replacement.information import (
    information_content,
    relative_information_content,
    text_information_content,
)
from privasis_bench.replacement.mlm import mask_passes
from privasis_bench.replacement.nmi import ClusteringSettings, clustering_nmi, normalized_mutual_information
from privasis_bench.replacement.pairs import Pair
from privasis_bench.replacement.similarity import similarity
from privasis_bench.replacement.tps import document_tps, text_preserved_similarity
from privasis_bench.replacement.trir import trir


class KnownProbabilities:
    """An estimator with fixed probabilities per span text."""

    name = "known"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def describe(self) -> dict:
        return {"name": self.name}

    def probabilities(self, text, spans):
        return [self.table[text[s:e]] for s, e in spans]


class KnownSimilarities:
    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = table

    def similarities(self, pairs):
        return [self.table[p] for p in pairs]


def words(text):
    import re

    return [(m.start(), m.end()) for m in re.finditer(r"\w+", text)]


def test_information_content_is_the_negative_log_probability():
    assert information_content(1.0) == 0.0
    assert information_content(math.exp(-2)) == pytest.approx(2.0)
    assert text_information_content([1.0, 2.0, 3.0]) == 6.0
    assert relative_information_content(2.0, 8.0) == 0.25 and relative_information_content(1.0, 0.0) == 0.0


def test_similarity_is_the_cosine_clipped_to_zero_and_one():
    assert similarity(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == pytest.approx(1.0)
    assert similarity(np.array([1.0, 0.0]), np.array([1.0, 1.0])) == pytest.approx(1 / math.sqrt(2))
    assert similarity(np.array([1.0, 0.0]), np.array([-1.0, 0.0])) == 0.0


def test_tps_weighs_each_span_by_its_relative_information():
    assert text_preserved_similarity([0.5, 0.25, 0.25], [1.0, 0.0, 0.4]) == pytest.approx(0.6)


def test_a_document_with_known_information_and_similarities():
    text = "Anna lives in Oslo"
    # IC: Anna = 4, lives = 1, Oslo = 3 (probabilities e^-4, e^-1, e^-3); "in" is not a span here
    estimator = KnownProbabilities({"Anna": math.exp(-4), "lives": math.exp(-1), "in": 1.0, "Oslo": math.exp(-3)})
    pairs = [Pair(0, 4, "Anna", "[PERSON]"), Pair(14, 18, "Oslo", "a city in Norway")]
    sims = KnownSimilarities({("Anna", "[PERSON]"): 0.25, ("Oslo", "a city in Norway"): 0.5})
    result = document_tps(text, pairs, estimator, sims, words)
    # TIC = 4 + 1 + 0 + 3 = 8; TPS = 4/8 * 0.25 + 1/8 * 1 + 0 + 3/8 * 0.5
    assert result.tic == pytest.approx(8.0)
    assert result.tps == pytest.approx(0.125 + 0.125 + 0.1875)
    assert [e["similarity"] for e in result.edited] == [0.25, 0.5]
    unchanged = document_tps(text, [], estimator, sims, words)
    assert unchanged.tps == pytest.approx(1.0)


def test_alternating_masks_cover_every_span_once():
    assert mask_passes(5, 2) == [[0, 2, 4], [1, 3]]
    assert mask_passes(7, 6) == [[0, 6], [1], [2], [3], [4], [5]]
    assert mask_passes(2, 6) == [[0], [1]]


def test_trir_is_the_attack_accuracy():
    assert trir(["a", "b", None, "a"], ["a", "a", "c", "a"]) == 0.5
    assert trir([], []) is None


def test_nmi_of_known_clusterings():
    assert normalized_mutual_information([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert normalized_mutual_information([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.0)


def test_clustering_nmi_is_one_for_the_same_well_separated_documents_and_lower_when_mixed():
    original = np.array([[0, 0], [0.1, 0], [10, 10], [10.1, 10], [0, 10], [0.1, 10]], dtype=float)
    settings = ClusteringSettings(k=3, restarts=5, repetitions=2, seed=0)
    assert clustering_nmi(original, original + 0.01, settings) == pytest.approx(1.0)
    mixed = original[[0, 2, 4, 1, 3, 5]]
    assert clustering_nmi(original, mixed, settings) < 0.5
    assert clustering_nmi(original[:3], original[:3], settings) is None  # fewer documents than clusters + 1
