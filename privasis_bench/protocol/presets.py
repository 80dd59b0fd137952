"""Scoring rules where the harness and the reference evaluator may differ, and the ``paper`` preset that sets them all.

Two rules are the harness's own choice unless a run asks otherwise, each a named, recorded option:

* ``empty_outputs``: ``judge`` (the reference evaluator's rule: an empty or whitespace-only output is shown to the
  judge like any other text) or ``skip`` (the harness default, a departure: no question is asked, every target
  counts as sanitized and every keep attribute as lost). A failed model call is never shown to the judge.
* ``inclusion_text``: the text put into the retention (inclusion) question: ``raw`` (the reference rule: the judged
  text as it is) or ``after-think`` (the harness default, a departure: the segment after the first ``</think>``,
  as the guessing questions get it).

:data:`PAPER` lists every setting that matters for comparability with the paper's Table 4 and its official value;
``--preset paper`` on ``run``/``evaluate`` applies them, ``results.json`` records ``scoring_preset``, and
:func:`preset_problems` checks a results file that claims the preset against what it records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping

EmptyOutputRule = Literal["judge", "skip"]
EMPTY_OUTPUT_RULES: tuple[str, ...] = ("judge", "skip")
InclusionText = Literal["raw", "after-think"]
INCLUSION_TEXTS: tuple[str, ...] = ("raw", "after-think")

#: The harness defaults of the two rules (stricter than, and departing from, the reference evaluator).
DEFAULT_EMPTY_OUTPUTS: EmptyOutputRule = "skip"
DEFAULT_INCLUSION_TEXT: InclusionText = "after-think"


@dataclass(frozen=True)
class PresetSetting:
    """One setting a preset fixes: the command-line option, its value, and where results record it."""

    option: str  # e.g. "--empty-outputs"
    value: Any
    recorded_at: tuple[str, ...]  # key path inside results.json
    applies: str = "always"  # "always", "judge" (only with a judge model) or "model" (only when a model is called)


#: Every setting that matters for comparability with Table 4, at the reference evaluator's value.
PAPER: tuple[PresetSetting, ...] = (
    PresetSetting("--instruction", "base", ("instruction",)),
    PresetSetting("--parse-mode", "official", ("parse_mode",)),
    PresetSetting("--empty-outputs", "judge", ("judge", "empty_outputs")),
    PresetSetting("--inclusion-text", "raw", ("judge", "inclusion_text")),
    PresetSetting("--empty-answers", "accept", ("answer_policy", "judge", "empty"), "judge"),
    PresetSetting("--judge-truncated-answers", "accept", ("answer_policy", "judge", "truncated"), "judge"),
    PresetSetting("--judge-guess-max-tokens", 512, ("judge", "guess_max_tokens"), "judge"),
    PresetSetting("--judge-compare-max-tokens", 4096, ("judge", "compare_max_tokens"), "judge"),
    PresetSetting("judge.temperature", 0.0, ("judge", "temperature"), "judge"),
    PresetSetting("--empty-answers", "accept", ("answer_policy", "model", "empty"), "model"),
    PresetSetting("--truncated-answers", "accept", ("answer_policy", "model", "truncated"), "model"),
    PresetSetting("--max-tokens", 9024, ("model", "generation", "max_tokens"), "model"),
    PresetSetting("--temperature", 0.0, ("model", "generation", "temperature"), "model"),
)
PRESETS: dict[str, tuple[PresetSetting, ...]] = {"paper": PAPER}


def preset_values(name: str) -> dict[str, Any]:
    """``option -> value`` of preset ``name`` (one entry per option)."""
    if name not in PRESETS:
        raise ValueError(f"unknown scoring preset {name!r} (known: {', '.join(PRESETS)})")
    return {s.option: s.value for s in PRESETS[name]}


def _recorded(results: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = results
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return _MISSING
        node = node[key]
    return node


_MISSING = object()


def preset_problems(results: Mapping[str, Any]) -> list[str]:
    """Where a results file that records ``scoring_preset`` does not hold the preset's values (empty: consistent).

    The preset needs a judge model (``judge.mode`` "model"): a run without one never holds it. Settings of the model
    under test are checked when the run called it (``evaluate`` on saved predictions calls none).
    """
    name = results.get("scoring_preset")
    if name is None:
        return []
    if name not in PRESETS:
        return [f"scoring_preset: unknown preset {name!r} (known: {', '.join(PRESETS)})"]
    judged = (results.get("judge") or {}).get("mode") == "model"
    called = isinstance((results.get("model") or {}).get("generation"), Mapping)
    problems = []
    if not judged:  # the paper's scoring asks a judge model: a run without one is not the paper's scoring
        problems.append(f"judge.mode: scoring_preset {name} requires a judge model, the results record "
                        f"{(results.get('judge') or {}).get('mode')!r} (a run with --judge none cannot claim the preset)")
    for setting in PRESETS[name]:
        if (setting.applies == "judge" and not judged) or (setting.applies == "model" and not called):
            continue
        got = _recorded(results, setting.recorded_at)
        if got is _MISSING or got != setting.value:
            shown = "nothing" if got is _MISSING else repr(got)
            problems.append(f"{'.'.join(setting.recorded_at)}: scoring_preset {name} requires {setting.value!r} "
                            f"({setting.option}), the results record {shown}")
    return problems


def withhold_inexact_metrics(results: dict[str, Any]) -> None:
    """Under a scoring preset, blank the headline metrics that are not the preset's numbers (in place).

    A failed model output that was not scored as an empty output (``--score-failed-as-empty``) is left out of the
    metrics; the paper's evaluator reads a failed call as an empty answer and judges it, so the numbers computed
    without it are not the paper's. The console shows none for such a run and ``submit`` refuses it; results.json
    then records each headline metric and interval as null and says why in ``metrics.withheld``."""
    if results.get("scoring_preset") is None:
        return
    failed = int((results.get("counts") or {}).get("failed_outputs") or 0)
    if not failed or (results.get("checks") or {}).get("failed_outputs") == "scored_as_empty":
        return
    metrics = results.get("metrics")
    if not isinstance(metrics, dict) or not isinstance(metrics.get("headline"), dict):
        return
    metrics["headline"] = {key: None for key in metrics["headline"]}
    metrics["ci"] = {key: None for key in metrics.get("ci") or {}}
    metrics["withheld"] = (f"{failed} failed model output(s) were left out, so these are not the "
                           f"{results['scoring_preset']} preset's numbers (its evaluator judges a failed call as an "
                           "empty answer): re-run to retry them, or pass --score-failed-as-empty")
