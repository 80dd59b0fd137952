"""TAB's measures on hand-computed fixtures: two annotators who disagree, multi-mention entities, partial masks and
overlapping system spans. Expected values were counted by hand from the definitions in privasis_bench/tab/metrics.py."""

from __future__ import annotations

import re

import pytest

from privasis_bench.tab.metrics import pooled, tally_document, total
from privasis_bench.tab.records import Mention, TabDocument
from privasis_bench.tab.tokens import IgnoreMap

TEXT = "Mr Jan Kos met Ann Lee in Oslo on 3 May 2001. Jan Kos paid."
_FUNCTION = {"in": "ADP", "on": "ADP", "the": "DET", "and": "CCONJ"}


def word_tagger(text: str) -> list[tuple[int, int, str, str]]:
    """A unit-test tagger: \\w+ tokens, a handful of function words, everything else a proper noun."""
    return [(m.start(), m.end(), m.group(0).lower(), _FUNCTION.get(m.group(0).lower(), "PROPN"))
            for m in re.finditer(r"\w+", text)]


IGNORE = IgnoreMap(word_tagger, {"tagger": "unit-test"})


def at(surface: str, nth: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(nth + 1):
        start = TEXT.index(surface, start + 1)
    return start, start + len(surface)


def mention(eid: str, etype: str, idt: str, surface: str, nth: int = 0) -> Mention:
    s, e = at(surface, nth)
    return Mention(f"{eid}-{s}", eid, etype, s, e, TEXT[s:e], idt)


def fixture() -> TabDocument:
    a = (mention("a1", "PERSON", "DIRECT", "Mr Jan Kos"), mention("a2", "PERSON", "QUASI", "Ann Lee"),
         mention("a3", "LOC", "NO_MASK", "Oslo"), mention("a4", "DATETIME", "QUASI", "3 May 2001"),
         mention("a1", "PERSON", "DIRECT", "Jan Kos", 1))
    b = (mention("b1", "PERSON", "DIRECT", "Mr Jan Kos"), mention("b1", "PERSON", "DIRECT", "Jan Kos", 1),
         mention("b2", "LOC", "QUASI", "Oslo"), mention("b3", "DATETIME", "QUASI", "3 May 2001"))
    return TabDocument("d1", TEXT, "test", {"A": a, "B": b, "C": ()})


SYSTEM = [at("Jan Kos"), at("Oslo"), at("in Oslo"), at("3 May")]  # S2 and S3 overlap; the date is partly masked


def test_recall_precision_and_entity_measures_match_the_hand_count():
    m = pooled(tally_document(fixture(), SYSTEM, IGNORE))
    assert m["mention_recall"] == pytest.approx(3 / 8)
    assert m["token_recall"] == pytest.approx(11 / 19)
    assert m["recall_direct_entities"] == 0.0
    assert m["recall_quasi_entities"] == pytest.approx(1 / 4)
    assert m["recall_all_entities"] == pytest.approx(1 / 6)
    assert m["token_recall_by_type"] == pytest.approx({"DATETIME": 4 / 6, "LOC": 1.0, "PERSON": 6 / 12})
    # annotator C has no mention: the document has two annotators; "in" is masked by nobody, Oslo by B only
    assert m["token_precision"] == pytest.approx(10 / 14)
    assert m["mention_precision"] == pytest.approx(5 / 8)
    p, r = 10 / 14, 11 / 19
    assert m["token_f1"] == pytest.approx(2 * p * r / (p + r))


def test_masking_every_mention_of_an_entity_protects_it_and_titles_may_stay_visible():
    doc = fixture()
    spans = [at("Jan Kos"), at("Jan Kos", 1)]  # "Mr" left visible: a title the official scorer ignores
    m = pooled(tally_document(doc, spans, IGNORE))
    assert m["recall_direct_entities"] == 1.0
    assert m["recall_quasi_entities"] == 0.0


def test_an_entity_takes_its_kind_from_its_first_mention_and_no_mask_mentions_count_in_recall_only():
    ms = (mention("x", "PERSON", "QUASI", "Ann Lee"), mention("x", "PERSON", "DIRECT", "Jan Kos", 1),
          mention("x", "PERSON", "NO_MASK", "Mr Jan Kos"))
    doc = TabDocument("d2", TEXT, "test", {"A": ms})
    m = pooled(tally_document(doc, [at("Ann Lee"), at("Jan Kos", 1)], IGNORE))
    assert m["recall_quasi_entities"] == 1.0  # the NO_MASK mention is not needed for the entity to count as masked
    # ... and the entity is quasi (its first mention is QUASI): no direct entity, so nothing to count there; a recall
    # over nothing is left out (None), where TAB's script prints 0
    assert m["recall_direct_entities"] is None
    assert pooled(tally_document(doc, [at("Ann Lee"), at("Jan Kos", 1)], IGNORE), official=True)["recall_direct_entities"] == 0.0
    assert m["mention_recall"] == pytest.approx(2 / 3)  # the NO_MASK mention of an entity to mask is still counted


def test_tallies_pool_as_micro_averages_over_documents():
    doc = fixture()
    one, two = tally_document(doc, SYSTEM, IGNORE), tally_document(doc, [], IGNORE)
    m = pooled(total([one, two]))
    assert m["mention_recall"] == pytest.approx(3 / 16)
    assert m["token_precision"] == pytest.approx(10 / 14)  # the empty system adds no unit
    assert pooled(total([two]))["token_precision"] == 0.0  # nothing masked: 0, as the official script returns


def test_missed_mentions_are_listed_with_partial_masks_marked():
    t = tally_document(fixture(), SYSTEM, IGNORE)
    missed = {(x["annotator"], x["text"]): x["partial"] for x in t.missed}
    assert missed[("A", "3 May 2001")] is True and missed[("A", "Ann Lee")] is False
    assert ("B", "Oslo") not in missed and ("A", "Oslo") not in missed


def test_a_document_without_mentions_to_mask_has_no_recall_and_does_not_pull_the_pooled_one_down():
    empty = TabDocument("d0", TEXT, "test", {})
    no_mask = TabDocument("d3", TEXT, "test", {"A": (mention("y", "PERSON", "NO_MASK", "Ann Lee"),)})
    for doc in (empty, no_mask):
        m = pooled(tally_document(doc, [at("Ann Lee")], IGNORE))
        assert all(m[k] is None for k in ("token_recall", "mention_recall", "recall_all_entities", "token_f1"))
        assert m["token_precision"] == 0.0  # masked something no annotator asked for
    with_them = pooled(total([tally_document(fixture(), SYSTEM, IGNORE), tally_document(empty, [], IGNORE)]))
    alone = pooled(tally_document(fixture(), SYSTEM, IGNORE))
    assert with_them["token_recall"] == alone["token_recall"] and with_them["mention_recall"] == alone["mention_recall"]


def test_an_empty_span_inside_a_mention_is_an_unmatched_unit_of_mention_precision_as_in_the_official_script():
    doc = fixture()
    s, _ = at("Ann Lee")
    plain = tally_document(doc, SYSTEM, IGNORE).counts
    more = tally_document(doc, [*SYSTEM, (s + 1, s + 1), (s + 3, s + 1)], IGNORE).counts
    assert more["men_units"] == plain["men_units"] + 2 * 2  # two more units, each counted once per annotator
    assert more["men_tp"] == plain["men_tp"]  # matched by no annotator
    assert (more["tok_units"], more["tok_tp"], more["men_masked"]) == (plain["tok_units"], plain["tok_tp"], plain["men_masked"])
