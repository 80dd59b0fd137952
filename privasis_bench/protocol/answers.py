"""How a model's answer text is read: reasoning blocks, surrounding whitespace and leaked role tokens.

One set of rules serves both sides of the protocol, so they cannot drift apart:

* :func:`clean_answer` is applied to every answer before anything reads it: the judge's answers (before they
  are stored in a verdict, put into a follow-up question or parsed for a label) and, as the first steps of
  :func:`privasis_bench.protocol.testee.postprocess_output`, the sanitized text of the model under test.
* :func:`think_segment` is the question-side rule: the text put into a guessing or inclusion question.
"""

from __future__ import annotations

import re

THINK_CLOSE = "</think>"

# A leaked chat-template role token, read exactly as the reference client reads it (protocol §2): a leading
# ``assistant`` or ``</assistant>``, in any case, together with the whitespace that follows it. Nothing else is a
# role token: ``Assistant: X`` keeps ``: X`` and ``<assistant>X`` is left alone.
ROLE_TOKEN_RE = re.compile(r"^(assistant|</assistant>)\s*", re.IGNORECASE)


def clean_answer(raw: str | None) -> str:
    """The part of an answer that counts (protocol §2): after the last ``</think>``, stripped, role token dropped.

    One function serves both sides: every judge answer, and the first steps of the testee post-processing.
    ``None`` (no answer) reads as the empty string.
    """
    text = raw or ""
    if THINK_CLOSE in text:
        text = text.rsplit(THINK_CLOSE, 1)[1]
    return ROLE_TOKEN_RE.sub("", text.strip(), count=1)


def think_segment(text: str | None) -> str:
    """The text a judge question is built from: the segment after the first ``</think>``, up to a second one.

    A text without ``</think>`` is used whole (protocol §3, tier 2).
    """
    text = text or ""
    if THINK_CLOSE in text:
        return text.split(THINK_CLOSE)[1]
    return text
