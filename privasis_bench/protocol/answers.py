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

# A leaked chat-template role token: "assistant" then a newline or colon (any case), or the lower-case
# token followed by a space (chat templates write role names in lower case; a capitalized
# "Assistant manager ..." at the start of a document is real text and is kept).
_ROLE_TOKEN_RE = re.compile(r"^(?:(?i:assistant)(?:[ \t]*[\r\n:]|$)|assistant[ \t])")


def clean_answer(raw: str | None) -> str:
    """The part of an answer that counts: after the last ``</think>``, stripped, without a leading role token.

    ``None`` (no answer) reads as the empty string.
    """
    text = (raw or "").strip()
    if THINK_CLOSE in text:
        text = text.rsplit(THINK_CLOSE, 1)[1].strip()
    match = _ROLE_TOKEN_RE.match(text)
    if match:
        text = text[match.end():].strip()
    return text


def think_segment(text: str | None) -> str:
    """The text a judge question is built from: the segment after the first ``</think>``, up to a second one.

    A text without ``</think>`` is used whole (protocol §3, tier 2).
    """
    text = text or ""
    if THINK_CLOSE in text:
        return text.split(THINK_CLOSE)[1]
    return text
