"""One board row per verified (entry, task): what it scored, what it tolerated, and where it may rank.

A row is a plain JSON-ready dict (the board's ``privasis.json`` holds them as they are). Each row says:

* ``partial``: the run scored fewer records than its task holds (``--limit``); a partial run is never ranked with
  full runs: its record set differs, so it lands in its own comparable group.
* ``gold_reading``: the model reads the gold labels (``reference``, ``mask-targets``), derived from the model spec's
  adapter class (``rankable = False``), never from a flag in the submission: such a row never gets a rank.
* ``tolerated``: every condition the run accepted instead of failing (failed outputs scored as empty, off-label
  and cut judge answers, cut model outputs, custom prompts), one readable line each.
* ``group`` and ``rank``: rows are comparable only within the same task, track and record set (the dataset's
  ids hash); within a group ranked rows are ordered by Full Successful Record (ties share a rank).

Facts a verifier derives (``Verified.facts()``: ``partial``, ``rankable``, ``agreement`` or ``rejudge_agreement``,
``records_of_task``, ``custom_inputs``) are used when present and derived here when absent. The tolerated
conditions are always counted here, from the run's cumulative counts (a resume never hides a cut answer).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any, Iterable

from privasis_bench.adapters.registry import load_adapter_class
from privasis_bench.data.loading import load_records
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.board_claims import board_claims
from privasis_bench.leaderboard.judge_cuts import recorded_cut_answers
from privasis_bench.leaderboard.provenance import pinned_judge
from privasis_bench.leaderboard.verify import Verified
from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.leaderboard.families import PRIVASIS_COLUMNS, family_named

HEADLINE: tuple[tuple[str, str], ...] = PRIVASIS_COLUMNS
RANK_KEY = "full_successful_record"
OVERALL = "overall"
#: Track order on the board: re-judged entries first.
TRACK_ORDER = ("verified", "self-reported")


def _text(value: Any) -> str | None:
    """A label as text: None for a missing one (never NaN, never a number where text is expected)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return str(value)


#: Other names a verifier may use for the same facts (``Verified.facts()``).
_ALIASES = {"rejudge_agreement": ("rejudge_agreement", "agreement"), "task_records": ("task_records", "records_of_task")}


def _facts(v: Verified) -> dict[str, Any]:
    """The verifier's per-entry facts (``Verified.facts()`` when the verifier provides it, else nothing)."""
    facts = getattr(v, "facts", None)
    if callable(facts) and v.results:
        got = facts()
        return got if isinstance(got, dict) else {}
    return {}


def _extra(v: Verified, key: str) -> Any:
    """A fact the verifier derived (its facts, or an attribute of the verification), never a submitted file's field."""
    facts = _facts(v)
    for name in _ALIASES.get(key, (key,)):
        for value in (facts.get(name), getattr(v, name, None)):
            if value is not None and not callable(value):
                return value
    return None


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


def cut_counts(v: Verified) -> tuple[int, int]:
    """(cut model outputs, cut judge answers) over the whole run, resumes included.

    Counts the verifier re-derived from per-record fields (``output_cut``, ``cut_answers``) win; otherwise the run's
    cumulative usage (every invocation), never the last invocation's alone.
    """
    counts = v.counts
    derived_out = next((getattr(counts, n) for n in ("cut_outputs", "cut_model_outputs")
                        if getattr(counts, n, None) is not None), None) if counts else None
    derived_judge = getattr(counts, "cut_judge_answers", None) if counts else None
    res = v.results or {}
    judge = derived_judge if derived_judge is not None else recorded_cut_answers(res)
    model = derived_out if derived_out is not None else int((res.get("counts") or {}).get("truncated_outputs") or 0)
    return int(model), int(judge)


def health(v: Verified) -> dict[str, Any]:
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
    if (res.get("testee_prompt") or {}).get("shipped") is False:
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
    custom = _extra(v, "custom_inputs")
    if isinstance(custom, (list, tuple)):
        tolerated += [f"input of the user's own: {c}" for c in custom]
    return {
        "failed_outputs": failed, "unjudged": counts.unjudged if counts else None, "off_label": off_label,
        "cut_model_outputs": cut_out, "cut_judge_answers": cut_judge, "tolerated": tolerated, "marks": marks,
        "harness_version": _text((v.submission.get("harness") or {}).get("version")),
    }


def _model_label(model: dict[str, Any]) -> str:
    """The model's label, with the NER pipeline of a tool such as Presidio (``backend.spacy_model``), marked as
    self-reported: the verifier recomputes from the outputs and never runs the back-end the submission names."""
    backend = model.get("backend") or {}
    extra = (f" (spaCy {backend['spacy_model']}, self-reported)" if isinstance(backend, dict)
             and backend.get("spacy_model") else "")
    return f"{_text(model.get('label')) or '?'}{extra}"


def entry_row(v: Verified, task: str, metrics: dict[str, Any], viewer: str | None) -> dict[str, Any]:
    """The board row of one verified task folder (``task`` is ``overall`` for a pooled row)."""
    sub, res = v.submission, v.results
    loaded = (res.get("dataset") or {}).get("records_loaded")
    full = _extra(v, "task_records")
    full = full if isinstance(full, int) else task_record_count(sub["task"]["name"])
    limit = sub["dataset"].get("limit")
    short = (loaded < full) if isinstance(loaded, int) and full is not None else limit is not None
    partial = bool(_extra(v, "partial")) or short  # the verifier's word can add the mark, never remove it
    gold = reads_gold(res.get("model") or sub.get("model") or {})
    rankable = _extra(v, "rankable")
    row: dict[str, Any] = {
        "name": _text(sub["name"]), "label": _text(sub.get("label")), "track": _text(sub["track"]),
        "rejudged": sub["track"] == "verified", "reference": bool(sub.get("reference")), "task": task,
        "model": _model_label(sub["model"]), "judge": _text((sub.get("judge") or {}).get("label")),
        "parse_mode": _text(sub.get("parse_mode")), "instruction": _text(sub.get("instruction")),
        "records": metrics["scored_records"], "records_loaded": loaded, "task_records": full,
        "limit": sub["dataset"].get("limit"), "record_set": _text(sub["dataset"].get("ids_hash")),
        "partial": bool(partial), "gold_reading": gold,
        "rankable": (rankable is not False) and not gold and not sub.get("reference"),
        "rejudge_agreement": _extra(v, "rejudge_agreement"), "viewer": viewer,
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


def group_key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    """Rows are comparable only within one task, track and record set, and (replacement quality) one estimator key:
    numbers from different estimators are never ranked together."""
    return (row["task"], row["track"] or "", row["record_set"] or "", str(row.get("estimator_key") or ""))


def _group_order(key: tuple[str, str, str, str], rows: list[dict[str, Any]]) -> tuple:
    track = TRACK_ORDER.index(key[1]) if key[1] in TRACK_ORDER else len(TRACK_ORDER)
    partial = any(r["partial"] for r in rows)
    return (track, key[0] == OVERALL, key[0], partial, -max(r["records"] or 0 for r in rows), key[2], key[3])


def _standing(row: dict[str, Any], order: tuple[tuple[str, str], ...]) -> tuple[float, ...]:
    """A row's place on its family's ranking keys, smaller is better (a missing number is worst)."""
    out = []
    for key, better in order:
        value = row.get(key)
        value = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        out.append(float("inf") if value is None else (value if better == "lower" else -value))
    return tuple(out)


def rank_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group rows, rank each group by its family's headline (Full Successful Record for Privasis, token recall for
    TAB, TRIR then TPS for replacement quality; best first, ties share a rank and are marked ``tied``, unrankable
    rows last without a rank), and return them
    in board order with ``group`` (1, 2, ... in board order), ``rank`` and ``tied`` set."""
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(group_key(row), []).append(row)
    out: list[dict[str, Any]] = []
    for number, key in enumerate(sorted(groups, key=lambda k: _group_order(k, groups[k])), start=1):
        fam = family_named(groups[key][0].get("family"))
        if fam.rank_by:
            place = lambda r: _standing(r, fam.order())  # noqa: E731
        else:  # one headline, higher is better (a missing number counts 0, as the board always did)
            place = lambda r: (-(r.get(fam.rank_key) or 0.0),)  # noqa: E731
        members = sorted(groups[key], key=lambda r: (not r["rankable"], place(r), r["name"] or ""))
        rank, previous = 0, None
        for position, row in enumerate(members, start=1):
            if row["rankable"]:
                if place(row) != previous:
                    rank, previous = position, place(row)
                row["rank"] = rank
            else:
                row["rank"] = None
        for row in members:  # ties share a rank and say so (the board shows "1=")
            row["tied"] = row["rank"] is not None and sum(r["rank"] == row["rank"] for r in members) > 1
            row["group"] = number
            out.append(row)
    return out


def group_title(row: dict[str, Any]) -> str:
    """A heading for a row's comparable group: task, track and which records it covers."""
    judged = row.get("family", "privasis") == "privasis"
    track = (("verified (re-judged)" if judged else "verified (recomputed from the shipped documents)")
             if row["track"] == "verified" else f"{row['track']} (not re-judged)" if judged else str(row["track"]))
    if row["partial"]:
        of = f" of {row['task_records']}" if row.get("task_records") else ""
        records = f"partial runs: {row['records_loaded'] or row['records']}{of} records, ranked only among themselves"
    else:
        records = "full runs"
    estimators = f" · {row['estimators']}" if row.get("estimators") else ""  # replacement quality: what scored it
    return f"{row['task']} · {track} · {records}{estimators}"
