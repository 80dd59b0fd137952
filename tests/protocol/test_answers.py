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
        ("  <think>x</think>\nassistant\n  lena okafor\n", "lena okafor"),
        ("", ""),
        (None, ""),
    ],
)
def test_clean_answer(raw, expected):
    assert clean_answer(raw) == expected


# The reference client's rule (protocol §2): ``^(assistant|</assistant>)\s*``, case-insensitive, after the last
# </think> and a strip; nothing else is a role token.
ROLE_TOKEN_PROBES = [
    ("assistant\nX", "X"),
    ("ASSISTANT X", "X"),
    ("</assistant>X", "X"),
    ("</Assistant> X", "X"),
    ("Assistant: X", ": X"),
    ("assistantX", "X"),
    ("<assistant>X", "<assistant>X"),
    ("   assistant\n\n X", "X"),  # leading whitespace before the token
    ("\n</ASSISTANT>\tX", "X"),
    ("<think>plan</think>assistant X", "X"),  # the token after a </think>
    ("<think>plan</think>\n</assistant>\nX", "X"),
    ("Assistant manager Lena", "manager Lena"),  # the reference drops it too
    ("assistant assistant X", "assistant X"),  # only one token
    ("X assistant", "X assistant"),
]


@pytest.mark.parametrize("raw, expected", ROLE_TOKEN_PROBES)
def test_role_token_rule_matches_the_reference_client(raw, expected):
    assert clean_answer(raw) == expected


@pytest.mark.parametrize("raw, expected", ROLE_TOKEN_PROBES)
def test_judge_answers_and_testee_outputs_share_the_role_token_rule(raw, expected):
    # One function serves both sides: the testee post-processing starts with exactly the judge-answer cleaning.
    assert postprocess_output(raw, "### Sanitized text:") == clean_answer(raw) == expected


@pytest.mark.parametrize(
    "raw, cue",
    [
        ("Dear patient\n**Cue:**", "**Cue:**"),
        ("Dear patient\nCue:", "**Cue:**"),
        ("Dear patient ** Cue: **", "**Cue:**"),
        ("Dear patient\n*Cue:*\n", "Cue:"),
        ("Dear patient\n**Cue:**", "Cue:"),
        ("Dear patient Cue:", "Cue:"),
    ],
)
def test_trailing_cue_echo_with_markdown_emphasis_is_dropped(raw, cue):
    assert postprocess_output(raw, cue) == "Dear patient"


def test_cue_still_present_keeps_what_follows_its_last_occurrence():
    # the cut is at the heading without emphasis, as the reference pipeline cuts (issue 35.4)
    assert postprocess_output("intro **Cue:** first **Cue:** second", "**Cue:**") == "** second"
    assert postprocess_output("intro Cue: first Cue: second", "**Cue:**") == "second"
    assert postprocess_output("Dear patient", "**Cue:**") == "Dear patient"


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
