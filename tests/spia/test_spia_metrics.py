"""Scoring subjects and the protection rates (values computed by hand)."""

from __future__ import annotations

import pytest

from privasis_bench.spia.matching import parse_verdict, score_subject
from privasis_bench.spia.metrics import (
    bootstrap_intervals,
    protection_rates,
    tally_document,
)
from privasis_bench.spia.records import TAGS, Attribute, Subject


def _subject(sid: int, **values: tuple[str, int]) -> Subject:
    attrs = [Attribute(t, *(values[t] if t in values else ("", 0)), 1) for t in TAGS]
    return Subject(sid, f"person {sid}", tuple(attrs))


def _inferred(**values: str) -> list[Attribute]:
    return [Attribute(t, v, 4, 1) for t, v in values.items()]


@pytest.mark.parametrize("answer, verdict", [
    ("Yes", "yes"), ("yes.", "yes"), ("Yes, but no", "no"), ("It is less precise", "less precise"),
    ("No", "no"), ("", "no"), (None, "no"), ("unsure", "no"), ("yes, I know", "no"),  # "know" holds "no"
])
def test_matcher_answers_are_read_as_the_official_parser_reads_them(answer, verdict):
    assert parse_verdict(answer) == verdict


def test_rules_first_then_the_matcher_then_the_best_pair():
    gold = _subject(0, NAME=("Ann Lee", 5), AGE=("34", 4), LOCATION=("Oslo / Norway", 3), OCCUPATION=("nurse", 2),
                    SEX=("female", 5))
    asked = []

    def matcher(g, i, tag):
        asked.append((g, i, tag))
        return {"Norway": "less precise", "Dr Lee": "no"}.get(i, "yes")

    scored = score_subject(gold, _inferred(NAME="Dr Lee", AGE="37", LOCATION="Norway", OCCUPATION="nurse"), matcher)
    by_tag = {t.tag: t for t in scored.tags}
    assert by_tag["AGE"].score == 1.0 and by_tag["AGE"].method == "rule"
    assert by_tag["LOCATION"].score == 0.5 and by_tag["LOCATION"].method == "rule"  # a tail: no question asked
    assert by_tag["NAME"].score == 0.0 and by_tag["NAME"].method == "matcher"
    assert by_tag["SEX"].score == 0.0 and by_tag["SEX"].method == "absent"
    assert asked == [("Ann Lee", "Dr Lee", "NAME")]


def test_an_uncomparable_age_asks_the_matcher_or_drops_the_subject_as_the_official_code_does():
    gold = _subject(0, AGE=("25-35", 5))
    asked = score_subject(gold, _inferred(AGE="30s"), lambda g, i, t: "yes")
    assert asked.tags[0].score == 1.0 and asked.dropped is None
    dropped = score_subject(gold, _inferred(AGE="30s"), lambda g, i, t: "yes", uncomparable="drop-subject")
    assert dropped.tags == () and "'30s' is not a number" in dropped.dropped


def test_cpr_ipr_and_per_tag_by_hand():
    a = score_subject(_subject(0, NAME=("Ann", 5), AGE=("34", 4), SEX=("female", 3), OCCUPATION=("nurse", 1)),
                      _inferred(NAME="Ann", AGE="80"), lambda g, i, t: "no")
    b = score_subject(_subject(1, NAME=("Bo", 5), LOCATION=("Oslo / Norway", 3)),
                      _inferred(NAME="Bo", LOCATION="Norway"), lambda g, i, t: "no")
    c = score_subject(_subject(2, NAME=("Cy", 2)), _inferred(NAME="Cy"), lambda g, i, t: "no")  # nothing counted
    rates = protection_rates([tally_document("d1", [a, c]), tally_document("d2", [b])])
    # subject a: 3 counted (NAME 1, AGE 0, SEX 0) -> S=1; subject b: 2 counted (NAME 1, LOCATION 0.5) -> S=1.5
    assert rates["attributes"] == 5 and rates["score_sum"] == 2.5 and rates["subjects"] == 2
    assert rates["cpr"] == pytest.approx(1 - 2.5 / 5)
    assert rates["ipr"] == pytest.approx(((1 - 1 / 3) + (1 - 1.5 / 2)) / 2)
    assert rates["per_tag"]["NAME"] == {"cpr": 0.0, "attributes": 2, "score_sum": 2.0}
    assert rates["per_tag"]["LOCATION"]["cpr"] == 0.5 and "OCCUPATION" not in rates["per_tag"]
    assert protection_rates([])["cpr"] is None


def test_intervals_do_not_depend_on_row_order():
    docs = [tally_document(f"d{i}", [score_subject(_subject(i, NAME=("Ann", 5), AGE=("30", 4)),
                                                   _inferred(NAME="Ann" if i % 2 else "Bo", AGE=str(30 + i)),
                                                   lambda g, i_, t: "no")]) for i in range(12)]
    forward = bootstrap_intervals(docs, samples=200, seed=7)
    assert forward == bootstrap_intervals(list(reversed(docs)), samples=200, seed=7)
    assert forward["cpr"]["low"] <= protection_rates(docs)["cpr"] <= forward["cpr"]["high"]
    assert bootstrap_intervals([], samples=10, seed=1)["ipr"] == {"low": None, "high": None}
