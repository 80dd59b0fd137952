"""What the board must say about a verified entry beyond its numbers, each fact derived by the verifier, never taken
from a flag the submitter sets: ``partial`` (fewer records than the shipped task: never ranked with full runs),
``rankable`` (false for a model that reads gold labels, decided from its spec: ``reference``, ``mask-targets``),
``custom_inputs`` (files of the user's own: self-reported) and ``tolerated`` (every condition the run passed with).
"""

from __future__ import annotations

from typing import Any, Mapping

from privasis_bench.adapters.registry import BUILTIN_PROVIDERS, load_adapter_class
from privasis_bench.leaderboard.judge_cuts import recorded_cut_answers
from privasis_bench.protocol.testee_prompt import custom_testee_prompt


def adapter_attribute(spec: Any, name: str, default: Any) -> Any:
    """An attribute of the shipped adapter class a recorded model spec names; ``default`` for a plugin (what it does
    is beyond the verifier: docs/publishing.md, "cannot know") or a back-end not installed here."""
    provider = spec.get("provider") if isinstance(spec, Mapping) else None
    if provider not in BUILTIN_PROVIDERS:
        return default
    try:
        return getattr(load_adapter_class(provider), name, default)
    except Exception:  # noqa: BLE001 - an optional back-end that is not installed still names a known provider
        return default


def spec_reads_gold(spec: Any) -> bool:
    """True when the spec names a shipped provider whose adapter reads the gold labels (never rankable)."""
    return not bool(adapter_attribute(spec, "rankable", True))


def rankable(results: Mapping[str, Any]) -> bool:
    """An entry may rank only if its model reads no gold labels, by the spec and by the recorded flag."""
    model = results.get("model") or {}
    return model.get("rankable") is not False and not spec_reads_gold(model.get("spec"))


def tolerated(results: Mapping[str, Any], counts: Any) -> list[str]:
    """Every tolerated condition of a passed run, as short labels (empty for a clean run)."""
    checks, recorded = results.get("checks") or {}, results.get("counts") or {}
    out = []
    if checks.get("failed_outputs") == "scored_as_empty" and counts is not None and counts.failed_outputs:
        out.append(f"{counts.failed_outputs} failed output(s) scored as empty")
    if counts is not None and counts.off_label:
        out.append(f"{counts.off_label} off-label judge answer(s)")
    cut_outputs = getattr(counts, "cut_outputs", None)
    cut_outputs = cut_outputs if cut_outputs is not None else int(recorded.get("truncated_outputs") or 0)
    if cut_outputs:
        out.append(f"{cut_outputs} model output(s) cut at the token budget")
    cut_judge = getattr(counts, "cut_judge_answers", None)
    if cut_judge is None:  # rows written before cut_answers existed: what results.json records over every invocation
        cut_judge = recorded_cut_answers(results)
    if cut_judge:
        out.append(f"{cut_judge} judge answer(s) cut at the token budget")
    if custom_testee_prompt(results):  # from the recorded wording, not the recorded flag
        out.append("custom testee prompt")
    return out


def board_facts(*, results: Mapping[str, Any], counts: Any, task_records: int | None, custom: list[str],
                agreement: dict[str, Any] | None) -> dict[str, Any]:
    """The per-entry fields the board data carries (see the module docstring)."""
    scored = ((results.get("metrics") or {}).get("scored_records"))
    loaded = (results.get("counts") or {}).get("records_loaded")
    limit = (results.get("dataset") or {}).get("limit")
    partial = limit is not None or (task_records is not None and isinstance(loaded, int) and loaded < task_records)
    return {
        "partial": bool(partial),
        "records_of_task": task_records,
        "scored_records": scored,
        "rankable": rankable(results),
        "custom_inputs": list(custom),
        "tolerated": tolerated(results, counts),
        "agreement": agreement,
    }
