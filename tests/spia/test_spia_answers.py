"""The SPIA prompts fill cleanly and the answers are read strictly."""

from __future__ import annotations

import pytest

from privasis_bench.spia.answers import UnreadableAnswer, parse_pairs, parse_people, parse_profile
from privasis_bench.spia.prompts import TEMPLATE_NAMES, fill, load_templates, people_block, subject_lines
from privasis_bench.spia.records import CODE_TAGS, NON_CODE_TAGS, Attribute


def test_shipped_templates_hold_their_placeholders_and_keep_json_braces():
    templates = load_templates()
    assert set(templates.texts) == set(TEMPLATE_NAMES) and len(templates.sha256()) == 5
    prompt = fill(templates.texts["profile_codes"], text="Call {me} at 555", subjects=subject_lines(["Ann", "Bo"]))
    assert "Call {me} at 555" in prompt and "0. Ann\n1. Bo" in prompt and '{"people": [{"subject_id": 0' in prompt


def test_an_override_without_its_placeholders_is_refused(tmp_path):
    bad = tmp_path / "match.txt"
    bad.write_text("Is it the same?\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"match template lacks \{tag\}, \{gold\}, \{guess\}"):
        load_templates({"match": bad})


def test_people_list_and_count():
    answer = "People:\n- Mr Raja Arlewin | the applicant\n- Ms Berg | his lawyer\nNumber of people: 2\n"
    assert parse_people(answer) == ["Mr Raja Arlewin | the applicant", "Ms Berg | his lawyer"]
    with pytest.raises(UnreadableAnswer, match="says 3 people, the list has 2"):
        parse_people(answer.replace(": 2", ": 3"))
    with pytest.raises(UnreadableAnswer, match="no 'Number of people"):
        parse_people("- Ann")


def test_profiles_are_read_per_person_and_refused_when_off_form():
    answer = ('Here you go:\n```json\n{"people": [{"subject_id": 1, "attributes": [{"tag": "AGE", "keyword": "30-39", '
              '"certainty": "3"}, {"tag": "NAME", "keyword": "Ann", "certainty": 5}]}]}\n```')
    read = parse_profile(answer, NON_CODE_TAGS, people=2)
    assert read[0] == [] and read[1] == [Attribute("AGE", "30-39", 3, 0), Attribute("NAME", "Ann", 5, 0)]
    with pytest.raises(UnreadableAnswer, match="'AGE' is not one of the asked tags"):
        parse_profile(answer, CODE_TAGS, people=2)
    with pytest.raises(UnreadableAnswer, match="subject_id 1 is not one of the 1 people"):
        parse_profile(answer, NON_CODE_TAGS, people=1)
    with pytest.raises(UnreadableAnswer, match="certainty: 9 is not 0-5"):
        parse_profile(answer.replace('"certainty": 5', '"certainty": 9'), NON_CODE_TAGS, people=2)
    with pytest.raises(UnreadableAnswer, match="no JSON object"):
        parse_profile("I cannot help with that.", NON_CODE_TAGS, people=2)


def test_pairs():
    assert parse_pairs('{"pairs": [{"reference": 0, "inferred": 1}, {"reference": 1, "inferred": null}]}', 2, 2) == {
        0: 1, 1: None}
    with pytest.raises(UnreadableAnswer, match="paired twice"):
        parse_pairs('{"pairs": [{"reference": 0, "inferred": 1}, {"reference": 1, "inferred": 1}]}', 2, 2)
    with pytest.raises(UnreadableAnswer, match="not an inferred person"):
        parse_pairs('{"pairs": [{"reference": 0, "inferred": 5}]}', 1, 2)


def test_people_block_shows_only_inferred_values():
    block = people_block([("Ann", [Attribute("AGE", "34", 4, 0), Attribute("SEX", "", 0, 0)]), ("Bo", [])])
    assert block == "0. Ann (AGE=34)\n1. Bo"
