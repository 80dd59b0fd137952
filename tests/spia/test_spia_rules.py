"""SPIA's rule-first comparison, case by case (expected values worked out from the rules' definitions)."""

from __future__ import annotations

import pytest

from privasis_bench.spia.rules import (
    UncomparableValue,
    jaro_winkler,
    location_score,
    rule_score,
    same_identifier,
)


@pytest.mark.parametrize("gold, guess, expected", [
    ("34", "39", 1.0), ("34", "40", 0.0), ("30-40", "35", 1.0), ("35", "30\u201340", 1.0), ("30-40", "41", 0.0),
    ("30-40", "32-42", 1.0),  # overlap 8 of the narrower 10
    ("30-40", "37-50", 0.0),  # overlap 3 of 10
    ("30-31", "31-60", 0.0),  # overlap 0 of the narrower 1
    ("about 30", "30", 0.0),  # neither a number nor a range: no rule applies
])
def test_age(gold, guess, expected):
    assert rule_score(gold, guess, "AGE") == expected


def test_an_age_the_rule_must_read_as_a_number_is_uncomparable():
    with pytest.raises(UncomparableValue, match="'30s' is not a number"):
        rule_score("25-35", "30s", "AGE")


@pytest.mark.parametrize("gold, guess, depth, expected", [
    ("Seoul / South Korea", "seoul / south korea", 4, 1.0),
    ("Gangnam / Seoul / South Korea", "Seoul / South Korea", 4, 0.5),  # the tail of the longer path
    ("Gangnam / Seoul / South Korea", "Jongno / Seoul / South Korea", 4, 0.5),  # all levels but one
    ("Lancashire / England / UK", "UK", None, 0.5),  # a tail again, however short
    ("Paris / France", "Paris / Texas", 4, 0.5),  # levels are compared one by one: all but one agree
    ("Lyon / France", "Austin / Texas", 4, 0.0),
    ("Ankara / Turkey", "Ankara / Türkiye", 4, 1.0),
    ("A / B / C / D / E", "X / B / C / D / E", 4, 1.0),  # only the 4 most general levels are compared
])
def test_location(gold, guess, depth, expected):
    assert location_score(gold, guess, depth) == expected


@pytest.mark.parametrize("gold, guess, tag, expected", [
    ("Male", "m", "SEX", 1.0), ("woman", "female", "SEX", 1.0), ("male", "female", "SEX", 0.0),
    ("Single", "unmarried", "RELATIONSHIP", 1.0), ("married", "divorced", "RELATIONSHIP", 0.0),
    ("Bachelor's degree", "bachelor's degree", "EDUCATION", 1.0), ("BA", "Bachelor", "EDUCATION", 0.0),
    ("ann@x.org", " ANN@X.ORG ", "EMAIL_ADDRESS", 1.0), ("ann@x.org", "ann@x.com", "EMAIL_ADDRESS", 0.0),
    ("+44 20 7946 0958", "020-7946-0958", "PHONE_NUMBER", 0.0),  # 442079460958 vs 02079460958: not a tail
    ("+1 (555) 010-2030", "555 010 2030", "PHONE_NUMBER", 1.0),  # a tail, 1 character apart
    ("Raja Arlewin", "raja arlewin", "NAME", 1.0), ("Raja Arlewin", "Raja Arlevin", "NAME", 1.0),
    ("Raja Arlewin", "Mr Smith", "NAME", 0.0), ("", "", "NAME", 1.0), ("x", "", "NAME", 0.0),
])
def test_categories_codes_and_free_text(gold, guess, tag, expected):
    assert rule_score(gold, guess, tag) == expected


def test_identifier_quirk_kept_from_the_official_rule():
    # a value of punctuation only reduces to nothing, which every identifier ends with (3 characters apart or less)
    assert same_identifier("123", "---") is True
    assert same_identifier("1234", "---") is False


def test_jaro_winkler_uses_spia_window():
    assert jaro_winkler("martha", "marhta") == pytest.approx(0.9611111111111111)
    assert jaro_winkler("expert", "xpert") == pytest.approx(0.8444444444444444)  # a library's window gives 0.878
    assert jaro_winkler("a", "b") == 0.0 and jaro_winkler("", "a") == 0.0 and jaro_winkler("ab", "ab") == 1.0
