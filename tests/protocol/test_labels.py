"""Which judge answers are on-label (issue 16, point 3): a clean label the official reading agrees with."""

from __future__ import annotations

import pytest

from privasis_bench.protocol.labels import is_expected_label, off_label_answers
from privasis_bench.protocol.verdicts import KeepVerdict, RecordVerdict, TargetVerdict


@pytest.mark.parametrize("answer", ["response1", "Response 1.", " both ", "neither", "RESPONSE2", "**response2**"])
def test_clean_compare_labels_are_on_label(answer: str) -> None:
    assert is_expected_label(answer, "compare")


@pytest.mark.parametrize("answer", ["", "I cannot tell", "response 3", "neither; 1 is vague", "Both are wrong. neither",
                                    "The answer is response2 (see 1)"])
def test_other_compare_answers_are_off_label(answer: str) -> None:
    assert not is_expected_label(answer, "compare")


def test_inclusion_labels_must_read_the_same_officially() -> None:
    assert is_expected_label("YES", "inclusion") and is_expected_label(" no ", "inclusion")
    assert is_expected_label("yes", "inclusion")  # the official reading upper-cases: still YES
    for answer in ("Yes.", "y", "true", "maybe", "", "YES, it is present"):
        assert not is_expected_label(answer, "inclusion"), answer  # "Yes." reads as not retained officially


def test_off_label_answers_name_record_attribute_and_question() -> None:
    rv = RecordVerdict("r1", "c", "t", False,
                       targets=[TargetVerdict("name", "drop", None, "Ann", tier="sanitized", compare_answer="no idea"),
                                TargetVerdict("date", "abstract", None, "May", tier="proximity", compare_answer="response1")],
                       keep=[KeepVerdict("amount", "10 EUR", retained=False, via="judge", inclusion_answer="Yes.")])
    found = [a.to_dict() for a in off_label_answers([rv])]
    assert found == [{"record_id": "r1", "attribute": "name", "question": "compare", "answer": "no idea"},
                     {"record_id": "r1", "attribute": "amount", "question": "inclusion", "answer": "Yes."}]
