"""Answer cleaning (shared by the judge and the testee post-processing) and the question-side </think> rule."""

from __future__ import annotations

import pytest

from privasis_bench.protocol.answers import clean_answer, think_segment
from privasis_bench.protocol.testee import postprocess_output


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("YES", "YES"),
        (" YES\n", "YES"),
        ("<think>the value is 1 maybe</think>\n\nYES", "YES"),
        ("<think>a</think>b<think>c</think>  response2 ", "response2"),  # after the LAST </think>
        ("assistant\nresponse1", "response1"),
        ("Assistant: neither", "neither"),
        ("  <think>x</think>\nassistant\n  lena okafor\n", "lena okafor"),
        ("Assistant manager Lena", "Assistant manager Lena"),  # real text, not a role token
        ("", ""),
        (None, ""),
    ],
)
def test_clean_answer(raw, expected):
    assert clean_answer(raw) == expected


def test_testee_postprocessing_starts_with_the_same_cleaning():
    for raw in ("<think>plan</think>\nassistant\nDear patient", "  Dear patient \n", "assistant: Dear patient"):
        assert postprocess_output(raw, "### Sanitized text:") == clean_answer(raw) == "Dear patient"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("no thinking here", "no thinking here"),
        ("plan</think>answer", "answer"),
        ("a</think>b</think>c", "b"),  # after the first </think>, up to a second one
        ("a</think>b</think>c</think>d", "b"),
        ("</think>", ""),
        (None, ""),
    ],
)
def test_think_segment(text, expected):
    assert think_segment(text) == expected
