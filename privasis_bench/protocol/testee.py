"""The model under test's side of the protocol (§2): the request it receives and how its answer is read.

``build_sanitize_request`` renders the task's template into a single user message (no system prompt);
``postprocess_output`` cleans the raw answer in the protocol's order. Both are pure functions shared by
``sanitize``, the lm-eval task files and ``evaluate`` on imported predictions, so the three can never drift.
"""

from __future__ import annotations

import re

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.data.records import INSTRUCTION_VARIANTS, Record
from privasis_bench.errors import PrivasisError, TaskConfigError
from privasis_bench.fsutil import read_template_text
from privasis_bench.protocol.answers import clean_answer
from privasis_bench.tasks.config import TaskConfig

PLACEHOLDERS = ("instruction", "text")



_PLACEHOLDER_RE = re.compile(r"\{(instruction|text)\}")



def read_template(task: TaskConfig) -> str:
    """The task's sanitization template (one trailing newline stripped), checked for both placeholders."""
    path = task.prompt.template
    where = task.source_file or path
    template = read_template_text(path, f"sanitization template (prompt.template of {where})")
    missing = [name for name in PLACEHOLDERS if "{" + name + "}" not in template]
    if missing:
        names = ", ".join("{" + m + "}" for m in missing)
        raise TaskConfigError(where, "prompt.template", f"template {path} lacks the placeholder(s) {names}")
    return template



def render_prompt(template: str, instruction: str, text: str) -> str:
    """Fill ``{instruction}`` and ``{text}`` in one pass (other braces, also inside values, stay as they are)."""
    values = {"instruction": instruction, "text": text}
    return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], template)



def build_sanitize_request(
    record: Record,
    task: TaskConfig,
    *,
    instruction: str | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    template: str | None = None,
) -> ChatRequest:
    """The protocol §2 request for one record: a single user message, no system prompt.

    ``instruction`` is the variant (``base`` or ``smoothed``; default: the task's); ``max_tokens``
    and ``temperature`` default to the task's generation settings. ``template`` skips re-reading
    the template file when building many requests.
    """
    variant = instruction or task.prompt.instruction
    if variant not in INSTRUCTION_VARIANTS:
        raise PrivasisError(f"unknown instruction variant {variant!r} (expected one of {', '.join(INSTRUCTION_VARIANTS)})")
    template = template if template is not None else read_template(task)
    content = render_prompt(template, record.instruction(variant), record.text)
    return ChatRequest.user(
        content,
        max_tokens=int(max_tokens if max_tokens is not None else task.generation.max_tokens),
        temperature=float(temperature if temperature is not None else task.generation.temperature),
        record=record,
    )



def cue_heading(answer_cue: str) -> str:
    """The heading the post-processing looks for: the cue without surrounding whitespace and Markdown emphasis.

    The reference pipeline writes its cue as ``**Sanitized Text:**`` in the prompt but cuts the output at the bare
    ``Sanitized Text:``; a cue given here with emphasis is read the same way (``**X:**`` cuts at ``X:``).
    """
    return answer_cue.strip().strip("*").strip()


def _trailing_cue(heading: str) -> re.Pattern[str]:
    """A trailing echo of the heading, also wrapped in up to two ``*`` of markdown emphasis on either side.

    For a cue configured as ``Cue:`` or ``**Cue:**`` this matches ``Cue:``, ``**Cue:**`` and ``** Cue: **`` at the end.
    """
    return re.compile(r"\*{0,2}\s*" + re.escape(heading) + r"\s*\*{0,2}\s*\Z")


def postprocess_output(raw: str | None, answer_cue: str) -> str:
    """Clean a raw model output (protocol §2, in this order).

    :func:`clean_answer` (after the last ``</think>``, stripped, leading role token dropped); drop a trailing echo
    of the answer cue (with or without markdown emphasis); if the cue's heading (:func:`cue_heading`: the cue
    without emphasis) still occurs, keep what follows its last occurrence; strip. This is the reference
    pipeline's rule: for the cue ``**X:**`` an output ``**X:** text`` becomes ``** text``, as it does there.
    """
    text = clean_answer(raw)
    heading = cue_heading(answer_cue)
    if not heading:
        return text
    text = _trailing_cue(heading).sub("", text, count=1).rstrip()
    if heading in text:
        text = text.rsplit(heading, 1)[1]
    return text.strip()
