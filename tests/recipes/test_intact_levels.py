"""The pieces of ``intact:`` that call no model: matching, span planning and editing the text."""

from __future__ import annotations

import pytest

from privasis_bench.recipes.intact import GENERIC, edited, fits, plan_units, recovered


@pytest.mark.parametrize("span, guess, hit", [
    ("Porto", "porto", True),
    ("Porto", "Probably Porto, Portugal.", True),
    ("12 May 2023", '"12  may 2023"', True),
    ("12 May 2023", "May 2023", False),  # a vaguer guess does not recover the original
    ("Porto", "Lisbon", False),
    ("Dr. Ana Lima", "Ana Lima", False),  # one-way, as the protocol's value_in: the whole span must come back
    ("...", "anything", False),  # nothing left to recover after normalising
])
def test_recovered_is_the_protocols_substring_rule_normalised(span, guess, hit):
    assert recovered(span, guess) is hit


def _target(kind, label, spans):
    return {"kind": kind, "label": label, "values": [], "spans": {"0": spans}}


def test_plan_units_drop_spans_win_and_short_or_pronoun_spans_are_skipped():
    row = {"text": "x", "targets": [
        _target("abstract", "city", ["Porto", "porto", "She", "in"]),
        _target("drop", "name", ["Ana Lima", "Porto"]),
        _target("abstract", "date", ["12 May 2023", "Porto"]),
    ]}
    plan_units([row], max_spans=3)
    assert row["drops"] == ["Ana Lima", "Porto"]
    assert [(u["target"], u["span"]) for u in row["units"]] == [("date", "12 May 2023")]


def test_plan_units_caps_spans_per_target_and_skips_failed_rows():
    row = {"text": "x", "targets": [_target("abstract", "places", ["Porto", "Braga", "Faro"])]}
    failed = {"text": "x", "targets": [_target("abstract", "c", ["Porto"])], "error": {"step": "spans", "message": "m"}}
    plan_units([row, failed], max_spans=2)
    assert [u["span"] for u in row["units"]] == ["Porto", "Braga"] and "units" not in failed


def _unit(span, candidates, level=0, choice=None):
    return {"target": "t", "span": span, "candidates": candidates, "level": level, "choice": choice, "rejected": []}


def test_edited_replaces_every_occurrence_and_tidies_removals():
    row = {"text": "Patient: Ana Lima\nAna Lima, from Porto (PORTO), saw Dr. Ana Lima on 12 May\n2023 in Porto.",
           "drops": ["Ana Lima"],
           "units": [_unit("Porto", ["a city in Portugal", "a city"], level=1), _unit("12 May 2023", ["May 2023"], choice="spring")]}
    assert edited(row) == "Patient:\n, from a city (a city), saw Dr. on spring in a city."


def test_edited_falls_back_to_the_generic_level_and_leaves_longer_words_alone():
    row = {"text": "Porto and Portorož.", "drops": [], "units": [_unit("Porto", ["a city"], level=1)]}
    assert edited(row) == f"{GENERIC} and Portorož."
    assert edited({"text": "nothing to do", "drops": [], "units": []}) == "nothing to do"


def test_sentence_long_spans_are_not_generalized():
    sentence = "He reports better adherence since switching to a weekly pill organiser and now walks his dog"
    row = {"text": "x", "targets": [_target("abstract", "habits", [sentence, "weekly pill organiser"])]}
    plan_units([row], max_spans=3)
    assert [u["span"] for u in row["units"]] == ["weekly pill organiser"]


@pytest.mark.parametrize("candidate, ok", [("a city in Portugal", True), ("   ", False),
                                           ("1.1.1.1: 1.1.1.1.1: 1.1.1.1.1: 1.1.1.1.1: 1.1.1.1.1: 1.1.1", False)])
def test_fits_keeps_phrases_about_as_long_as_the_span(candidate, ok):
    assert fits("Porto", candidate) is ok
