"""``generate``: synthesize annotated records (profile -> type, context, format -> draft -> refine -> annotate).

Each function below is one step over a batch of working rows (plain dicts); :func:`synthesize_batch` chains
them, in two halves: :func:`draft_batch` (seed to draft, independent of every other row) and :func:`finish_batch`
(refinement against the row's diversity pool, filters, annotation, grouping). Random choices come from a
generator seeded by (recipe seed, row id, retry round, step), and every sampled model call carries a seed from
the same key, so a batch needs nothing but its ids and a :class:`SynthesisContext`. Each row's pool (embeddings
of records finished before it in id order) is an input of the batch, not state kept here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from privasis_bench.errors import DataError
from privasis_bench.recipes.config import RecipeConfig
from privasis_bench.recipes.decompose import locate
from privasis_bench.recipes.diversity import accept, delta_vendi
from privasis_bench.recipes.seeds import SeedFiles, draw_seed
from privasis_bench.recipes.steps import (
    REFUSAL,
    Ask,
    Call,
    StepFailure,
    alive,
    fail,
    key_values,
    list_items,
    make_request,
    match_name,
    rng_for,
    row_rng,
    run_calls,
    snake,
)

CORPUS_FIELDS = ("id", "record", "profile", "record_type", "context", "format", "event", "attributes", "grouped_attributes")


@dataclass
class SynthesisContext:
    """What a batch needs: recipe, seed files, the model, the preference judge, embeddings, each row's diversity
    pool (embeddings of records finished before it in id order; None: no record yet) and retry round."""

    recipe: RecipeConfig
    files: SeedFiles
    ask: Ask
    judge_ask: Ask
    embed: Callable[[list[str]], np.ndarray]
    pools: dict[str, np.ndarray | None] = field(default_factory=dict)
    rounds: dict[str, int] = field(default_factory=dict)


def _lines(mapping: dict[str, Any]) -> str:
    return "\n".join(f"{k.replace('_', ' ').title()}: {v}" for k, v in mapping.items())


def seed_rows(ids: list[str], ctx: SynthesisContext) -> list[dict[str, Any]]:
    """Working rows with their seed drawn from the seed files (a retried row, round > 0, draws a new seed)."""
    rows = []
    for i in ids:
        round_ = int(ctx.rounds.get(i, 0))
        rows.append({"id": i, "round": round_, "seed": draw_seed(ctx.files, ctx.recipe, row_rng(ctx.recipe.seed, i, "seed", round_)),
                     "stats": {}})
    return rows


def profiles(rows: list[dict[str, Any]], ctx: SynthesisContext) -> None:
    """The model fills a profile around the seed; at least three fields must come back."""
    calls = []
    for row in alive(rows):
        s = row["seed"]
        demographics = {k: s[k] for k in ("first_name", "age", "date", "marital_status", "income_class", "morality",
                                          "native_language", "blood_type")}

        def apply(answer: str, row=row, demographics=demographics) -> None:
            fields = key_values(answer)
            if len(fields) < 3:
                raise StepFailure(f"the profile answer has {len(fields)} 'Field: value' line(s), at least 3 are needed")
            seeded = {k: str(v) for k, v in demographics.items()}
            changed = sorted(k for k in seeded if k in fields and fields[k] != seeded[k])
            if changed:  # the seed wins: the model may not rename, re-age or re-date the person
                row["stats"]["profile_overrides_ignored"] = changed
            profile = {**fields, **seeded}
            profile["full_name"] = " ".join(p for p in (profile.get("first_name"), profile.get("last_name")) if p)
            row["profile"] = profile

        request = make_request(
            ctx.recipe, "profile", row=row, seed=_lines(demographics), event=s["event"], event_attributes=", ".join(s["event_attributes"]),
            sexes=", ".join(ctx.files.values["sex"]), ethnicities=", ".join(ctx.files.values["ethnicity"]),
            event_fields="\n".join(f"{a[:1].upper()}{a[1:]}:" for a in s["event_attributes"]))
        calls.append(Call(row, request, apply))
    run_calls(calls, ctx.ask, "profile")


def _profile_text(row: dict[str, Any]) -> str:
    return _lines(row["profile"])


def pick_from_list(rows: list[dict[str, Any]], ctx: SynthesisContext, step: str, field: str, keep: int,
                   fields: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Ask for a list, keep its first ``keep`` items and sample one into ``row[field]``."""
    calls = []
    for row in alive(rows):

        def apply(answer: str, row=row) -> None:
            items = [i for i in list_items(answer, limit=keep) if len(i) > 3]
            if not items:
                raise StepFailure(f"the {step} answer holds no list item")
            rng = rng_for(ctx.recipe.seed, row, step)
            row[field] = items[int(rng.integers(len(items)))]
            row["stats"][f"{step}_options"] = len(items)

        calls.append(Call(row, make_request(ctx.recipe, step, row=row, **fields(row)), apply))
    run_calls(calls, ctx.ask, step)


def _who(row: dict[str, Any]) -> dict[str, Any]:
    return {"profile": _profile_text(row), "name": row["profile"].get("first_name", row["seed"]["first_name"]),
            "attribute": row["seed"]["shared_attribute"]}


def _words(text: str) -> int:
    return len(text.split())


def _draft_ok(text: str, ctx: SynthesisContext) -> str | None:
    if REFUSAL.search(text[:300]):
        return "the draft is a refusal"
    if _words(text) < max(8, ctx.recipe.synthesis.min_words // 2):
        return f"the draft is too short ({_words(text)} words)"
    return None


def drafts(rows: list[dict[str, Any]], ctx: SynthesisContext) -> None:
    """Write the record; a refusal or a very short draft is tried once more (slightly warmer), then fails."""
    for attempt in (0, 1):
        calls = []
        for row in alive(rows):
            if row.get("text"):
                continue
            gen = ctx.recipe.step("draft")

            def apply(answer: str, row=row, attempt=attempt) -> None:
                problem = _draft_ok(answer, ctx)
                row["stats"]["draft_attempts"] = attempt + 1
                if problem is None:
                    row["text"] = answer.strip()
                elif attempt == 1:
                    raise StepFailure(f"{problem} (after a retry)")

            fields = {**_who(row), "context": row["context"], "record_type": row["record_type"], "format": row["format"]}
            calls.append(Call(row, make_request(ctx.recipe, "draft", temperature=gen.temperature + 0.1 * attempt,
                                                    row=row, draw=f"draft {attempt + 1}", **fields), apply))
        run_calls(calls, ctx.ask, "draft" if attempt == 0 else "draft retry")


def _preference(answer: str) -> str | None:
    m = re.search(r"\b([AB])\b", answer)
    return m.group(1) if m else None


def refine(rows: list[dict[str, Any]], ctx: SynthesisContext) -> None:
    """``refine_steps`` revisions, each kept iff ``alpha * judge preference + beta * delta Vendi > tau``.

    Every step draws a new candidate (its own sampling seed: a rejected revision is not asked for again
    verbatim); delta Vendi is measured against the row's own pool, ``ctx.pools[id]``."""
    p = ctx.recipe.synthesis
    for step in range(p.refine_steps):
        candidates: dict[str, str] = {}

        def keep_candidate(answer: str, row: dict[str, Any]) -> None:
            if not answer.strip():
                raise StepFailure(f"revision {step + 1} is empty")
            candidates[row["id"]] = answer.strip()

        calls = [Call(row, make_request(ctx.recipe, "revise", row=row, draw=f"revise {step + 1}", text=row["text"]), lambda a, row=row: keep_candidate(a, row))
                 for row in alive(rows)]
        run_calls(calls, ctx.ask, f"revise {step + 1}")
        live = [r for r in alive(rows) if r["id"] in candidates]
        prefs: dict[str, str | None] = {}
        judge_calls = []
        for row in live:
            revised_first = bool(rng_for(ctx.recipe.seed, row, f"order{step}").random() < 0.5)
            a, b = (candidates[row["id"]], row["text"]) if revised_first else (row["text"], candidates[row["id"]])
            revised_letter = "A" if revised_first else "B"

            def apply(answer: str, row=row, revised_letter=revised_letter) -> None:
                picked = _preference(answer)
                prefs[row["id"]] = None if picked is None else ("revised" if picked == revised_letter else "current")

            judge_calls.append(Call(row, make_request(ctx.recipe, "prefer", row=row, draw=f"prefer {step + 1}", text_a=a, text_b=b), apply))
        run_calls(judge_calls, ctx.judge_ask, f"prefer {step + 1}")
        live = [r for r in alive(rows) if r["id"] in prefs]
        if not live:
            continue
        vectors = ctx.embed([t for r in live for t in (r["text"], candidates[r["id"]])])
        for n, row in enumerate(live):
            gain = delta_vendi(ctx.pools.get(row["id"]), vectors[2 * n], vectors[2 * n + 1])
            preference = 1.0 if prefs[row["id"]] == "revised" else 0.0
            ok = accept(preference, gain, p.alpha, p.beta, p.tau)
            row["stats"].setdefault("refinement", []).append(
                {"step": step + 1, "judge": prefs[row["id"]] or "unparsed", "delta_vendi": round(gain, 6), "accepted": ok})
            if ok:
                row["text"] = candidates[row["id"]]


def _most_repeated_sentence(text: str) -> int:
    """How often the most frequent sentence of 8 or more words occurs."""
    counts = Counter(s.strip().lower() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 8)
    return max(counts.values(), default=0)


def filters(rows: list[dict[str, Any]], ctx: SynthesisContext) -> None:
    """Fail rows that are too short, about a minor, refusals or degenerate (repeated lines or words)."""
    p = ctx.recipe.synthesis
    for row in alive(rows):
        text, words = row["text"], row["text"].split()
        lines = [ln.strip() for ln in text.splitlines() if len(ln.strip()) > 10]
        age = re.match(r"\d+", str(row["profile"].get("age", "")))
        if len(words) < p.min_words:
            fail(row, "filter", f"fewer than {p.min_words} words ({len(words)})")
        elif age and int(age.group()) < p.min_age:
            fail(row, "filter", f"the person is under {p.min_age} ({age.group()})")
        elif REFUSAL.search(text[:300]):
            fail(row, "filter", "the record is a refusal")
        elif len(set(w.lower() for w in words)) < 0.2 * len(words) or (
                lines and max(lines.count(ln) for ln in lines) > p.max_sentence_repeats):
            fail(row, "filter", "degenerate output (repeated words or lines)")
        elif _most_repeated_sentence(text) > p.max_sentence_repeats:
            fail(row, "filter", f"degenerate output (a sentence repeated {_most_repeated_sentence(text)} times)")


_NOT_A_VALUE = re.compile(r"^(yes|no|true|false|none|unknown|n/?a|not (stated|given|mentioned)|-)$", re.I)


def _supported(value: str, text: str) -> bool:
    """A value the text states: verbatim, or every word of it (2+ characters) occurs in the text."""
    if locate(value, text):
        return True
    words = set(re.findall(r"\w{2,}", text.lower()))
    wanted = re.findall(r"\w{2,}", value.lower())
    return bool(wanted) and all(w in words for w in wanted)


def annotate(rows: list[dict[str, Any]], ctx: SynthesisContext) -> None:
    """The record's attributes, as the recipe describes them: profile attributes the record states (found verbatim,
    or named by the model when asked which profile facts the text gives away, e.g. an implied marital status),
    then the attributes the model extracts (event details included; short, specific values the text supports, no
    yes/no), merged without duplicates."""
    present: dict[str, set[str]] = {}
    extracted: dict[str, dict[str, str]] = {}
    calls = []
    for row in alive(rows):
        facts = "\n".join(f"- {snake(k)}: {v}" for k, v in row["profile"].items() if k != "full_name")

        def apply_present(answer: str, row=row) -> None:
            names = [snake(k) for k in row["profile"]]
            present[row["id"]] = {n for item in list_items(answer) if (n := match_name(item.split(":")[0].strip(), names))}

        def apply_extract(answer: str, row=row) -> None:
            extracted[row["id"]] = key_values(answer)

        calls.append(Call(row, make_request(ctx.recipe, "profile_check", row=row, text=row["text"], facts=facts), apply_present))
        calls.append(Call(row, make_request(ctx.recipe, "annotate", row=row, text=row["text"],
                                            event_attributes=", ".join(row["seed"]["event_attributes"])), apply_extract))
    run_calls(calls, ctx.ask, "annotate")
    for row in alive(rows):
        text, found = row["text"], {}
        named = present.get(row["id"], set())
        for key, value in row["profile"].items():
            key, value = snake(key), str(value)
            if key and len(value) > 1 and (locate(value, text) or key in named):
                found[key] = value
        if found.get("first_name") and found.get("last_name") and row["profile"].get("full_name"):
            found["full_name"] = row["profile"]["full_name"]
        answer = extracted.get(row["id"], {})
        kept = 0
        for key, value in answer.items():
            key = snake(key)
            if (key and key not in found and 1 < len(value) <= 120 and len(value.split()) <= 12
                    and not _NOT_A_VALUE.match(value.strip()) and _supported(value, text)):
                found[key] = value
                kept += 1
        row["stats"]["annotated"] = {"profile": len(found) - kept, "extracted": kept, "extracted_answered": len(answer)}
        if not found:
            fail(row, "annotate", "no annotated value occurs in the record text")
            continue
        row["attributes"] = found


def group(rows: list[dict[str, Any]], ctx: SynthesisContext) -> None:
    """The model clusters the attributes into named, possibly overlapping groups (names matched to the list)."""
    low, high = ctx.recipe.synthesis.groups_range
    calls = []
    for row in alive(rows):
        names = list(row["attributes"])

        def apply(answer: str, row=row, names=names) -> None:
            groups: dict[str, dict[str, Any]] = {}
            for line in answer.splitlines():
                head, sep, tail = line.partition(":")
                title = re.sub(r"^\W*\d*[.)]?\s*", "", head).strip(" *")
                members = [m for part in re.split(r"[,;]", tail) if (m := match_name(part.strip(" *-`'\""), names))]
                if sep and title and members:
                    groups.setdefault(title, {}).update({m: row["attributes"][m] for m in members})
            if len(groups) < low:
                raise StepFailure(f"the grouping answer has {len(groups)} usable 'Group: attribute, ...' line(s); "
                                  f"the recipe asks for {low} to {high} groups")
            if len(groups) > high:  # the first ones are kept; how many were cut is recorded
                row["stats"]["groups_cut"] = len(groups) - high
                groups = dict(list(groups.items())[:high])
            row["grouped_attributes"] = groups
            row["stats"]["groups"] = len(groups)

        example = f"Identity: {', '.join(names[:2])}"  # the line format, shown with this record's own names
        request = make_request(ctx.recipe, "group", row=row, attributes="\n".join(f"- {n}" for n in names), min_groups=low,
                               max_groups=high, example=example)
        calls.append(Call(row, request, apply))
    run_calls(calls, ctx.ask, "group")


def to_corpus_row(row: dict[str, Any]) -> dict[str, Any]:
    """The output row: record, profile, type, context, format, event, attributes, groups, stats, usage."""
    s = row["seed"]
    return {"id": row["id"], "record": row["text"], "profile": row["profile"], "record_type": row["record_type"],
            "context": row["context"], "format": row["format"],
            "event": {"name": s["event"], "attributes": s["event_attributes"], "shared_attribute": s["shared_attribute"]},
            "attributes": row["attributes"], "grouped_attributes": row["grouped_attributes"], "seed": s,
            "stats": {**row["stats"], "words": len(row["text"].split())}, "usage": row.get("usage")}


def validate_corpus_row(row: dict[str, Any]) -> None:
    """Raise DataError naming the record and field when a corpus row breaks the schema."""
    rid = row.get("id", "?")
    for name in CORPUS_FIELDS:
        if name not in row:
            raise DataError(f"corpus row {rid!r}: field {name!r} is missing")
    for name in ("id", "record", "record_type", "context", "format"):
        if not isinstance(row[name], str) or not row[name].strip():
            raise DataError(f"corpus row {rid!r}: field {name!r} must be a non-empty string")
    if not isinstance(row["attributes"], dict) or not row["attributes"]:
        raise DataError(f"corpus row {rid!r}: field 'attributes' must be a non-empty mapping")
    groups = row["grouped_attributes"]
    if not isinstance(groups, dict) or not groups or not all(isinstance(g, dict) and g for g in groups.values()):
        raise DataError(f"corpus row {rid!r}: field 'grouped_attributes' must map group names to non-empty mappings")
    unknown = sorted({a for g in groups.values() for a in g} - set(row["attributes"]))
    if unknown:
        raise DataError(f"corpus row {rid!r}: field 'grouped_attributes' names unknown attribute {unknown[0]!r}")


def draft_batch(ids: list[str], ctx: SynthesisContext) -> list[dict[str, Any]]:
    """The first half of a batch: seed, profile, type, context, format and draft (failed rows carry ``error``).

    Nothing here reads the diversity pool, and each row depends on its own id only: drafts can be made ahead of
    time, in any grouping, without changing what a row becomes."""
    p = ctx.recipe.synthesis
    rows = seed_rows(ids, ctx)
    profiles(rows, ctx)
    pick_from_list(rows, ctx, "record_types", "record_type", p.record_types_kept,
                   lambda r: {**_who(r), "count": p.record_types_kept, "formality": r["seed"]["formality"]})
    pick_from_list(rows, ctx, "contexts", "context", 5, lambda r: {**_who(r), "record_type": r["record_type"]})
    pick_from_list(rows, ctx, "formats", "format", 10, lambda r: {"record_type": r["record_type"], "context": r["context"]})
    drafts(rows, ctx)
    return rows


def finish_batch(rows: list[dict[str, Any]], ctx: SynthesisContext) -> list[dict[str, Any]]:
    """The second half: refinement against ``ctx.pools``, filters, annotation and grouping (in place; returns ``rows``)."""
    refine(rows, ctx)
    filters(rows, ctx)
    annotate(rows, ctx)
    group(rows, ctx)
    return rows


def synthesize_batch(ids: list[str], ctx: SynthesisContext) -> list[dict[str, Any]]:
    """Every synthesis step over one batch of record ids; failed rows carry ``error``."""
    return finish_batch(draft_batch(ids, ctx), ctx)
