"""Check that each recorded output is what the recorded post-processing makes of the recorded raw answer.

``results.json`` says how outputs were obtained: a run cleaned the model's raw answers with the testee
post-processing and the recorded answer cue (``testee_prompt.answer_cue``); ``evaluate`` on saved predictions
records ``model.predictions.postprocess`` (``none``: the stored text is judged verbatim; ``testee``: cleaned).
:func:`output_rule` turns that into a function of the raw answer, and :func:`check_output` compares a samples row
against it, so an output edited apart from its raw answer is caught by ``rescore`` and ``leaderboard verify``.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from privasis_bench.protocol.rederive import Contradiction
from privasis_bench.protocol.testee import postprocess_output

OutputRule = Callable[[str], str]


def postprocess_mode(results: Mapping[str, Any]) -> str | None:
    """``none`` or ``testee``: how this run's outputs were made from raw answers; None when it cannot be told."""
    predictions = (results.get("model") or {}).get("predictions")
    if not isinstance(predictions, Mapping):
        return "testee"  # run: the model's raw answers, cleaned by the harness
    mode = predictions.get("postprocess")
    if mode == "none" and predictions.get("format") == "sanitized":
        return None  # a saved sanitize file: its outputs were cleaned when it was written, under rules not recorded here
    return mode if mode in ("none", "testee") else None


def output_rule(results: Mapping[str, Any]) -> OutputRule | None:
    """The function that maps a raw answer to the output, per ``results``; None when the file does not say."""
    mode = postprocess_mode(results)
    if mode == "none":
        return lambda raw: raw
    cue = (results.get("testee_prompt") or {}).get("answer_cue")
    if mode == "testee" and isinstance(cue, str):
        return lambda raw: postprocess_output(raw, cue)
    return None


def check_output(row: Mapping[str, Any], rule: OutputRule | None) -> Contradiction | None:
    """A contradiction when a row's ``output`` is not ``rule(raw_output)``; None when it is, or nothing can be said."""
    raw, output = row.get("raw_output"), row.get("output")
    if rule is None or row.get("status") == "excluded" or not isinstance(raw, str) or output is None:
        return None
    expected = rule(raw)
    if output == expected:
        return None
    return Contradiction(str(row.get("record_id")), "record", "output", _short(output), _short(expected),
                         "the output must be the recorded post-processing of the recorded raw answer")


def _short(text: Any) -> Any:
    return text if not isinstance(text, str) or len(text) <= 80 else text[:77] + "..."
