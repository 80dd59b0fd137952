"""The Privasis family's board row: what an entry scored (recomputed), what it tolerated, its counts, and the
``overall`` row pooling an entry's tasks, from a :class:`~privasis_bench.leaderboard.verify.Verified` entry and the
facts its verifier derived; the tolerated conditions are counted from the run's cumulative counts (a resume never
hides a cut answer).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any, Mapping

from privasis_bench.adapters.registry import load_adapter_class
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.judge_cuts import recorded_cut_answers, self_reported
from privasis_bench.leaderboard.provenance import pinned_judge
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.protocol.family import BOARD
from privasis_bench.protocol.testee_prompt import custom_testee_prompt

HEADLINE: tuple[tuple[str, str], ...] = BOARD.columns


def _text(value: Any) -> str | None:
    """A label as text: None for a missing one (never NaN, never a number where text is expected)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return str(value)


@lru_cache(maxsize=None)
def task_record_count(task_name: str) -> int | None:
    """How many records the shipped task holds (None when its data cannot be loaded here)."""
    try:
        return task_records(shipped_task(task_name), limit=None)[1]  # never a path from a submission
    except PrivasisError:
        return None


def reads_gold(model: dict[str, Any]) -> bool:
    """True when the model spec's adapter reads gold labels (its class says ``rankable = False``).

    Decided from the provider in the recorded spec, not from the submission's own ``rankable`` flag; an unknown
    provider (a plugin not installed here) falls back to that flag.
    """
    provider = ((model or {}).get("spec") or {}).get("provider")
    if isinstance(provider, str) and provider:
        try:
            return not bool(load_adapter_class(provider).rankable)
        except (PrivasisError, ImportError):
            pass
    return (model or {}).get("rankable") is False


def cut_counts(v: Any) -> tuple[int, int]:
    """(cut model outputs, cut judge answers) over the whole run, resumes included.

    Counts the verifier re-derived from per-record fields (``output_cut``, ``cut_answers``) win; otherwise the run's
    cumulative usage (every invocation), never the last invocation's alone.
    """
    derived_out, derived_judge = getattr(v.counts, "cut_outputs", None), getattr(v.counts, "cut_judge_answers", None)
    res = v.results or {}
    judge = derived_judge if derived_judge is not None else recorded_cut_answers(res)
    model = derived_out if derived_out is not None else int((res.get("counts") or {}).get("truncated_outputs") or 0)
    return int(model), int(judge)


def health(v: Any) -> dict[str, Any]:
    """Counts a reader must see, the tolerated conditions (one line each) and the marks of a non-standard run."""
    res, counts = v.results, v.counts
    cut_out, cut_judge = cut_counts(v)
    failed = counts.failed_outputs if counts else None
    off_label = counts.off_label if counts else None
    marks: list[str] = []
    try:
        _, shipped = pinned_judge(shipped_task(res["task"]["name"]))
        if (res.get("judge") or {}).get("mode") != "none" and (res.get("judge") or {}).get("prompt_hashes") != shipped:
            marks.append("custom judge prompts")
    except PrivasisError:
        marks.append("custom judge prompts")
    if custom_testee_prompt(res):  # from the recorded wording, not the recorded flag
        marks.append("custom testee prompt")
    tolerated: list[str] = []
    if (res.get("checks") or {}).get("failed_outputs") == "scored_as_empty" and failed:
        marks.insert(0, "failed outputs scored as empty")
        tolerated.append(f"failed outputs scored as empty: {failed}")
    if off_label:
        tolerated.append(f"off-label judge answers: {off_label} (allowed up to "
                         f"{(res.get('checks') or {}).get('max_off_label')})")
    if cut_out:
        tolerated.append(f"model outputs cut at the token budget: {cut_out}")
    if cut_judge:
        tolerated.append(f"judge answers cut at the token budget: {cut_judge}")
    tolerated += [m for m in marks if m.startswith("custom")]
    tolerated += [f"input of the user's own: {c}" for c in v.custom]
    return {
        "failed_outputs": failed, "unjudged": counts.unjudged if counts else None, "off_label": off_label,
        "cut_model_outputs": cut_out, "cut_judge_answers": cut_judge, "tolerated": tolerated, "marks": marks,
        "harness_version": _text((v.submission.get("harness") or {}).get("version")),
    }


def board_claims(v: Any, submission: Mapping[str, Any]) -> dict[str, Any]:
    """What a row says about an entry's claims beyond its numbers: ``scoring_preset`` (``paper`` for a run with
    ``--preset paper``, which verify checked, else ``harness``), ``rejudge_note`` (why the build shows no re-judge
    agreement; None when it shows one) and ``self_reported`` (what the files alone state: :func:`.judge_cuts.self_reported`)."""
    preset = submission.get("scoring_preset")
    return {"scoring_preset": preset if isinstance(preset, str) else "harness",
            "rejudge_note": v.rejudge_note if isinstance(v.rejudge_note, str) else None,
            "self_reported": self_reported(v.results or {})}


def _model_label(model: dict[str, Any]) -> str:
    """The model's label, with the NER pipeline of a tool such as Presidio (``backend.spacy_model``)."""
    backend = model.get("backend") or {}
    extra = (f" (spaCy {backend['spacy_model']}, self-reported)" if isinstance(backend, dict)  # never run by the verifier
             and backend.get("spacy_model") else "")
    return f"{_text(model.get('label')) or '?'}{extra}"


def entry_row(v: Any, task: str, metrics: dict[str, Any], viewer: str | None) -> dict[str, Any]:
    """The board row of one verified task folder (``task`` is ``overall`` for a pooled row)."""
    sub, res = v.submission, v.results
    loaded = (res.get("dataset") or {}).get("records_loaded")
    facts = v.facts() if v.results else {}
    full = v.task_records if isinstance(v.task_records, int) else task_record_count(sub["task"]["name"])
    limit = sub["dataset"].get("limit")
    short = (loaded < full) if isinstance(loaded, int) and full is not None else limit is not None
    partial = bool(facts.get("partial")) or short  # the verifier's word can add the mark, never remove it
    gold = reads_gold(res.get("model") or sub.get("model") or {})
    row: dict[str, Any] = {
        "name": _text(sub["name"]), "label": _text(sub.get("label")), "track": _text(sub["track"]),
        "rejudged": sub["track"] == "verified", "reference": bool(sub.get("reference")), "task": task,
        "model": _model_label(sub["model"]), "judge": _text((sub.get("judge") or {}).get("label")),
        "parse_mode": _text(sub.get("parse_mode")), "instruction": _text(sub.get("instruction")),
        "records": metrics["scored_records"], "records_loaded": loaded, "task_records": full,
        "limit": sub["dataset"].get("limit"), "record_set": _text(sub["dataset"].get("ids_hash")),
        "partial": bool(partial), "gold_reading": gold,
        "rankable": (facts.get("rankable") is not False) and not gold and not sub.get("reference"),
        "rejudge_agreement": v.agreement, "viewer": viewer,
        **board_claims(v, sub),  # scoring preset, why not re-judged, what stays self-reported (see board_claims)
    }
    for key, _ in HEADLINE:
        ci = metrics["ci"].get(key) or {}
        row.update({key: metrics["headline"].get(key), f"{key}_low": ci.get("low"), f"{key}_high": ci.get("high")})
    row.update(health(v))
    row["leaks"] = metrics["leaks"]
    return row


def pooled_row(parts: list[dict[str, Any]], first: dict[str, Any]) -> dict[str, Any]:
    """Fold the per-task rows of one entry into its ``overall`` row (``first`` carries the pooled metrics)."""
    row = dict(first)
    for key in ("failed_outputs", "unjudged", "off_label", "cut_model_outputs", "cut_judge_answers"):
        row[key] = sum(p[key] or 0 for p in parts)
    row["marks"] = sorted({m for p in parts for m in p["marks"]})
    row["tolerated"] = [f"{p['task']}: {t}" for p in parts for t in p["tolerated"]]
    row["partial"] = any(p["partial"] for p in parts)
    row["rankable"] = all(p["rankable"] for p in parts)
    row["records"] = sum(p["records"] for p in parts)
    row["task_records"] = None if any(p["task_records"] is None for p in parts) else sum(p["task_records"] for p in parts)
    row["record_set"] = hashlib.sha256(json.dumps(sorted((p["task"], p["record_set"]) for p in parts)).encode()).hexdigest()
    row["limit"] = None
    row["rejudge_agreement"] = None  # agreement is per task: each task row shows its own
    row["rejudge_note"] = None
    row["scoring_preset"] = next(iter({p["scoring_preset"] for p in parts}), None) if len(
        {p["scoring_preset"] for p in parts}) == 1 else "mixed"
    row["self_reported"] = sorted({t for p in parts for t in p["self_reported"]})
    return row
