"""Off-label judge answers: answers the official reading decides on although they are not a clean label.

The official reading (protocol §3 step 3, §4 step 2) turns *any* answer into a decision: "I cannot tell,
maybe 1 of them" is a proximity leak, "Yes." is not retained. That is kept for comparability, but a judge
answering off-label text then yields plausible numbers silently. An answer is on-label when it is one clean
label of its question (case, surrounding punctuation and ``Response 1`` spelling tolerated) *and* the official
reading agrees with what that label means; every other answer is counted and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal

from privasis_bench.protocol.judge_prompts import parse_compare, parse_inclusion
from privasis_bench.protocol.verdicts import RecordVerdict

Question = Literal["compare", "inclusion"]
#: Characters of an off-label answer kept in reports.
ANSWER_CHARS = 200


def is_expected_label(answer: str, question: Question) -> bool:
    """True when ``answer`` is a clean label of ``question`` and the official reading agrees with it."""
    if question == "compare":
        return parse_compare(answer, "strict") is not None and parse_compare(answer, "strict") == parse_compare(answer)
    if question == "inclusion":
        return parse_inclusion(answer, "strict") is not None and parse_inclusion(answer, "strict") == parse_inclusion(answer)
    raise ValueError(f"unknown judge question {question!r}")


@dataclass(frozen=True)
class OffLabelAnswer:
    """One judge answer that is not one of its question's labels."""

    record_id: str
    attribute: str
    question: Question
    answer: str

    def to_dict(self) -> dict[str, Any]:
        return {"record_id": self.record_id, "attribute": self.attribute, "question": self.question,
                "answer": self.answer[:ANSWER_CHARS]}


def off_label_answers(verdicts: Iterable[RecordVerdict]) -> list[OffLabelAnswer]:
    """Every recorded proximity or inclusion answer that is not on-label, in record order."""
    found: list[OffLabelAnswer] = []
    for rv in verdicts:
        for t in rv.targets:
            if t.compare_answer is not None and not is_expected_label(t.compare_answer, "compare"):
                found.append(OffLabelAnswer(rv.record_id, t.name, "compare", t.compare_answer))
        for k in rv.keep:
            if k.inclusion_answer is not None and not is_expected_label(k.inclusion_answer, "inclusion"):
                found.append(OffLabelAnswer(rv.record_id, k.name, "inclusion", k.inclusion_answer))
    return found
