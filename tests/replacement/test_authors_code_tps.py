"""TPS as the paper authors' code computes it (``tps_variant: authors_code``) and its two bugs, on hand-computed
cases: one sentence whose terms and information content are fixed, edited in ways that reach each departure."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from privasis_bench.replacement.pairs import Pair
from privasis_bench.replacement.terms import authors_terms
from privasis_bench.replacement.tps_authors import (
    TPS_BUGS,
    document_tps_authors,
    edited_runs,
    term_edited,
    touches_ends,
)

TEXT = "Anna lives in Oslo."
# The authors' term set for TEXT: every token that is not white space, punctuation included.
TERMS = [(0, 4), (5, 10), (11, 13), (14, 18), (18, 19)]
# IC: Anna 4, lives 1, in 0.5, Oslo 3, "." 0.5 -> TIC 9
IC = {"Anna": 4.0, "lives": 1.0, "in": 0.5, "Oslo": 3.0, ".": 0.5}


class KnownIC:
    name = "known"

    def describe(self):
        return {"name": self.name}

    def probabilities(self, text, spans):
        return [math.exp(-IC[text[s:e]]) for s, e in spans]


class KnownCosines:
    """Cosines per (span, replacement); ``similarities`` (the paper's shortcuts) must not be what is used."""

    def __init__(self, table):
        self.table = table

    def cosines(self, pairs):
        return [self.table[p] for p in pairs]

    def similarities(self, pairs):
        raise AssertionError("the authors' variant computes every cosine, without the same-text shortcut")


def tps(pairs, cosines=None, bugs=()):
    return document_tps_authors(TEXT, pairs, KnownIC(), KnownCosines(cosines or {}), lambda text: TERMS, bugs)


def test_edited_runs_merge_overlapping_and_touching_edits_and_the_bug_drops_a_run_at_the_end():
    assert edited_runs(19, [(5, 10), (0, 4), (4, 5), (14, 19)]) == [(0, 10), (14, 19)]
    assert edited_runs(19, [(5, 10), (14, 19)], span_at_end_dropped=True) == [(5, 10)]
    assert edited_runs(19, [(0, 19)], span_at_end_dropped=True) == []


def test_a_term_is_edited_when_a_run_overlaps_it_and_with_the_bug_only_when_a_run_ends_inside_it():
    assert term_edited((11, 13), [(5, 18)]) is True
    assert term_edited((11, 13), [(5, 18)], inner_terms_unedited=True) is False
    assert term_edited((5, 10), [(5, 18)], inner_terms_unedited=True) is True  # the run starts inside
    assert term_edited((14, 18), [(5, 18)], inner_terms_unedited=True) is True  # the run ends inside
    assert touches_ends((11, 13), (5, 18)) is False and touches_ends((14, 18), (5, 18)) is True


def test_two_replaced_entities():
    result = tps([Pair(0, 4, "Anna", "[PERSON]"), Pair(14, 18, "Oslo", "a city")],
                 {("Anna", "[PERSON]"): 0.25, ("Oslo", "a city"): 0.5})
    # (4 * 0.25 + 1 + 0.5 + 3 * 0.5 + 0.5) / 9
    assert result.tic == pytest.approx(9.0) and result.spans == 5
    assert result.tps == pytest.approx(4.5 / 9)
    assert [e["similarity"] for e in result.edited] == [0.25, 0.5]


def test_a_long_replacement_gives_its_similarity_only_to_the_terms_at_its_ends():
    pairs = [Pair(5, 18, "lives in Oslo", "works abroad")]
    cos = {("lives in Oslo", "works abroad"): 0.4}
    # lives and Oslo touch the ends (0.4); "in" is strictly inside: edited without similarity (0)
    assert tps(pairs, cos).tps == pytest.approx((4 + 1 * 0.4 + 0 + 3 * 0.4 + 0.5) / 9)
    # the bug: "in" counts as unedited (1)
    assert tps(pairs, cos, ["tps_inner_terms_unedited"]).tps == pytest.approx((4 + 0.4 + 0.5 + 1.2 + 0.5) / 9)
    assert tps(pairs, cos).edited[0]["terms_at_ends"] == 2


def test_a_suppression_reaching_the_end_counts_and_the_bug_drops_it():
    pairs = [Pair(14, 19, "Oslo.", "")]
    assert tps(pairs).tps == pytest.approx((4 + 1 + 0.5) / 9)
    assert tps(pairs, bugs=["tps_span_at_end_dropped"]).tps == pytest.approx(1.0)
    everything = [Pair(0, 19, TEXT, "")]
    assert tps(everything).tps == 0.0
    assert tps(everything, bugs=TPS_BUGS).tps == pytest.approx(1.0)  # the whole text suppressed scores 1.0


def test_a_replacement_at_the_end_keeps_its_similarity_even_when_the_bug_drops_its_run():
    pairs = [Pair(14, 19, "Oslo.", "Bergen.")]
    cos = {("Oslo.", "Bergen."): 0.6}
    expected = (4 + 1 + 0.5 + 3 * 0.6 + 0.5 * 0.6) / 9
    assert tps(pairs, cos).tps == pytest.approx(expected)
    assert tps(pairs, cos, ["tps_span_at_end_dropped"]).tps == pytest.approx(expected)


def test_a_cosine_outside_zero_one_is_clipped_and_the_last_replacement_touching_a_term_wins():
    pairs = [Pair(0, 2, "An", "X"), Pair(2, 4, "na", "Y")]
    result = tps(pairs, {("An", "X"): -0.3, ("na", "Y"): 0.8})
    assert result.tps == pytest.approx((4 * 0.8 + 1 + 0.5 + 3 + 0.5) / 9)
    assert [e["similarity"] for e in result.edited] == [0.0, 0.8]


def test_a_document_without_information_has_no_tps():
    certain = SimpleNamespace(probabilities=lambda text, spans: [1.0 for _ in spans])
    result = document_tps_authors("...", [Pair(0, 1, ".", "")], certain, KnownCosines({}), lambda text: [(0, 1)])
    assert result.tps is None and result.tic == 0.0


class _Token(SimpleNamespace):
    def __len__(self):
        return len(self.text)


def _token(i, idx, text):
    return _Token(i=i, idx=idx, text=text)


def _span(start, end, start_char, end_char):
    return SimpleNamespace(start=start, end=end, start_char=start_char, end_char=end_char)


def test_the_authors_term_set_is_entities_then_free_noun_chunks_then_every_other_token():
    # "Mr Anna Berg met the judge ." with tokens at known offsets; entity "Anna Berg" (tokens 1-2);
    # noun chunks "Mr Anna Berg" (0-3, shares tokens with the entity: not taken) and "the judge" (4-6)
    words = ["Mr", "Anna", "Berg", "met", "the", "judge", " ", "."]
    starts = [0, 3, 8, 13, 17, 21, 26, 27]
    doc = [_token(i, s, w) for i, (s, w) in enumerate(zip(starts, words))]
    parsed = _Doc(doc, [_span(1, 3, 3, 12)], [_span(0, 3, 0, 12), _span(4, 6, 17, 26)])
    assert authors_terms(parsed) == [(0, 2), (3, 12), (13, 16), (17, 26), (27, 28)]


class _Doc(list):
    def __init__(self, tokens, ents, chunks):
        super().__init__(tokens)
        self.ents, self.noun_chunks = ents, chunks
