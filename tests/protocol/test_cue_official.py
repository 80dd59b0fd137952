"""A cue given with Markdown emphasis post-processes as the reference pipeline does for the same heading (issue 35.4).

The reference prompt writes its heading as ``**Sanitized Text:**`` and its post-processing cuts at the bare
``Sanitized Text:``. :func:`reference_postprocess` states that rule independently (protocol §2, with the heading
fixed, as the reference code has it); every probe must come out the same from the harness given the emphasized cue.
"""

from __future__ import annotations

import re

import pytest

from privasis_bench.protocol.testee import cue_heading, postprocess_output

HEADING = "Sanitized Text:"
EMPHASIZED = "**Sanitized Text:**"


def reference_postprocess(raw: str) -> str:
    """The reference rule for the heading ``Sanitized Text:``, written out step by step."""
    text = raw
    if "</think>" in text:
        text = text.split("</think>")[-1]
    text = text.strip()
    text = re.sub(r"^(assistant|</assistant>)\s*", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\*{0,2}\s*Sanitized Text:\s*\*{0,2}\s*$", "", text).rstrip()
    if HEADING in text:
        text = text.split(HEADING)[-1]
    return text.strip()


BODY = "Dear [NAME], your appointment is confirmed."
PROBES = [
    # no cue
    BODY, f"  {BODY}\n", "", "   ", f"assistant\n{BODY}", f"</assistant> {BODY}", f"Assistant: {BODY}",
    # the model echoes the heading before the text, with and without emphasis
    f"{EMPHASIZED}\n{BODY}", f"{HEADING}\n{BODY}", f"{HEADING} {BODY}", f"** {HEADING} **\n{BODY}",
    f"*{HEADING}*\n{BODY}", f"### {HEADING}\n{BODY}", f"**Sanitized Text**: {BODY}", f"sanitized text: {BODY}",
    # a trailing echo of the heading
    f"{BODY}\n{EMPHASIZED}", f"{BODY}\n{HEADING}", f"{BODY} ** {HEADING} **\n", f"{BODY}\n*{HEADING}*",
    # repeated cues
    f"{EMPHASIZED} draft\n{EMPHASIZED} {BODY}", f"{HEADING} a {HEADING} {BODY}", f"{EMPHASIZED}\n{BODY}\n{EMPHASIZED}",
    f"intro {EMPHASIZED} first {HEADING} {BODY}\n{HEADING}", f"{HEADING}{HEADING}{BODY}",
    # reasoning blocks and the cue together
    f"plan: {EMPHASIZED}</think>{EMPHASIZED}\n{BODY}", f"a</think>b</think>{HEADING} {BODY}",
    f"<think>x</think>\nassistant {EMPHASIZED} {BODY}", f"{BODY}</think>",
]


@pytest.mark.parametrize("raw", PROBES)
def test_emphasized_cue_post_processes_exactly_as_the_reference(raw):
    assert postprocess_output(raw, EMPHASIZED) == reference_postprocess(raw)
    assert postprocess_output(raw, HEADING) == reference_postprocess(raw)  # the bare heading: the same rule


def test_the_probe_set_exercises_the_emphasis_difference():
    """The probes include outputs where cutting at the emphasized cue itself would differ (the old rule)."""

    def old_rule(raw: str) -> str:
        text = postprocess_output(raw, "unused-cue-that-never-occurs")
        text = re.sub(r"\*{0,2}\s*Sanitized Text:\s*\*{0,2}\s*\Z", "", text).rstrip()
        return text.rsplit(EMPHASIZED, 1)[1].strip() if EMPHASIZED in text else text.strip()

    differing = [raw for raw in PROBES if old_rule(raw) != reference_postprocess(raw)]
    assert len(differing) >= 5
    # what the reference gives for an emphasized echo: the closing "**" stays with the text
    assert postprocess_output(f"{EMPHASIZED}\n{BODY}", EMPHASIZED) == f"**\n{BODY}"
    assert postprocess_output(f"{HEADING} {BODY}", EMPHASIZED) == BODY


@pytest.mark.parametrize("cue, heading", [("**Sanitized Text:**", "Sanitized Text:"), ("### Sanitized text:", "### Sanitized text:"),
                                          (" ** Cue: ** ", "Cue:"), ("*X:*", "X:"), ("Plain:", "Plain:")])
def test_cue_heading_drops_only_surrounding_emphasis(cue, heading):
    assert cue_heading(cue) == heading


def test_the_shipped_cue_is_unaffected():
    cue = "### Sanitized text:"
    assert postprocess_output(f"{cue}\n{BODY}", cue) == BODY
    assert postprocess_output(f"{BODY}\n{cue}", cue) == BODY
    assert postprocess_output(f"x {cue} y {cue} {BODY}", cue) == BODY
