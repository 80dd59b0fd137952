"""``build-corpus``: turn annotated records into Privasis-Zero benchmark rows (the decomposition pipeline).

Per batch of input rows: :func:`prepare` (read the input, chunk), :func:`rank` (the model orders attributes and
groups by sensitivity), :func:`choose` (targets drawn with those weights, keep attributes with zero word overlap,
fixed drop strategies), spans / strategies / rewrites (:mod:`decompose`), :func:`instructions` (base lines and
the model's smoothed version), :func:`label` (the protocol's judge on the pipeline's own rewrite: ``vanilla``
when it fully succeeds, ``hard`` otherwise) and :func:`to_benchmark_row`. :func:`build_batch` chains them; it
holds no state beyond its arguments, so a distributed engine can map it over batches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.data.normalize import normalize_row
from privasis_bench.protocol.judge import Judge, JudgeInput, JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.metrics import is_full_success
from privasis_bench.recipes.chunking import chunk_text
from privasis_bench.recipes.config import RecipeConfig
from privasis_bench.recipes.decompose import find_spans, merged, rewrite_chunks, write_strategies
from privasis_bench.recipes.steps import (
    Ask,
    Call,
    StepFailure,
    alive,
    fail,
    make_request,
    ranked_names,
    rng_for,
    run_calls,
)
from privasis_bench.recipes.targets import Unit, choose_keep, keep_column, select_targets, selection_column


@dataclass
class CorpusContext:
    """Everything a batch needs: the recipe, the model, and the judge that labels rows (None: direct/verbatim only)."""

    recipe: RecipeConfig
    ask: Ask
    judge_prompts: JudgePrompts
    judge_settings: JudgeSettings
    judge_ask: Callable[[list[ChatRequest]], list[ChatResult]] | None


def _mapping(row: dict[str, Any], *names: str) -> dict[str, Any]:
    for name in names:
        value = row.get(name)
        if isinstance(value, str) and value.strip():
            value = json.loads(value)
        if isinstance(value, dict):
            return value
    return {}


def prepare(inputs: list[dict[str, Any]], recipe: RecipeConfig) -> list[dict[str, Any]]:
    """Working rows from input rows, chunked: ``generate`` output (``record``, ``attributes``,
    ``grouped_attributes``) or benchmark rows (``original_record``, ``grouped_annotated_attributes``: the
    attributes are then the union of the groups' members). ``_round`` (set by the driver) is the retry round."""
    rows = []
    for n, src in enumerate(inputs):
        row: dict[str, Any] = {"id": str(src.get("id", f"row-{n}")), "round": int(src.get("_round", 0) or 0)}
        rows.append(row)
        try:
            text = src.get("record") or src.get("original_record") or ""
            attributes = _mapping(src, "attributes", "annotated_attributes")
            groups = _mapping(src, "grouped_attributes", "grouped_annotated_attributes")
        except ValueError as exc:
            fail(row, "input", f"invalid JSON in an attribute column: {exc}")
            continue
        if not isinstance(text, str) or not text.strip():
            fail(row, "input", "field 'record' (or 'original_record') is missing or empty")
            continue
        if not attributes:  # a benchmark row: its attributes are the members of its groups
            attributes = {a: v for members in groups.values() if isinstance(members, dict) for a, v in members.items()}
        if not attributes:
            fail(row, "input", "no attributes: fields 'attributes' and 'grouped_annotated_attributes' are missing or empty")
            continue
        row.update(text=text, record_type=str(src.get("record_type") or ""), attributes=attributes,
                   groups={g: {a: attributes.get(a, v) for a, v in attrs.items()} for g, attrs in groups.items() if isinstance(attrs, dict)},
                   chunks=chunk_text(text, recipe.corpus.chunk_chars))
    return rows


def rank(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask) -> None:
    """The model ranks the attributes and the groups by sensitivity (names it omits share the last rank)."""
    calls: list[Call] = []
    for row in alive(rows):
        row["ranking"] = {"attributes": [], "groups": []}
        for key, names in (("attributes", list(row["attributes"])), ("groups", list(row["groups"]))):
            if len(names) < 2:
                row["ranking"][key] = names
                continue

            def apply(answer: str, row=row, key=key, names=names) -> None:
                row["ranking"][key] = ranked_names(answer, names)
                if not row["ranking"][key]:  # recorded (row and statistics); targets are then drawn uniformly
                    row["ranking"].setdefault("unparsed", []).append(key)

            listing = "\n".join(f"- {n}" for n in names)
            calls.append(Call(row, make_request(recipe, "rank", row=row, draw=f"rank {key}", text=row["text"], items=listing), apply))
    run_calls(calls, ask, "rank")


def _label(unit: Unit, list_attrs: bool) -> str:
    if not unit.group:
        return unit.name.replace("_", " ")
    names = ", ".join(a.replace("_", " ") for a in unit.attrs)
    return f"{unit.name} ({names})" if list_attrs else unit.name


def _value_text(unit: Unit) -> str:
    return "; ".join(str(v) for v in unit.values)


def choose(rows: list[dict[str, Any]], recipe: RecipeConfig) -> None:
    """Targets and keep attributes per row; drop targets get their fixed strategy here."""
    params = recipe.corpus
    for row in alive(rows):
        rng = rng_for(recipe.seed, row, "targets")
        sel = select_targets(row["attributes"], row["groups"], row["ranking"], params, rng)
        keep = choose_keep(sel, row["attributes"], params, rng, row["groups"])
        list_attrs = bool(rng.random() < params.list_group_attributes_probability)
        row["targets"] = []
        for kind, unit in sel.targets():
            label = _label(unit, list_attrs)
            strategy = None
            if kind == "drop":
                strategy = (f"Drop all information about the {label} from the text." if unit.group
                            else f"Drop the {label} '{_value_text(unit)}' from the text.")
            row["targets"].append({"kind": kind, "label": label, "name": unit.name, "group": unit.group,
                                   "attrs": unit.attrs, "values": unit.values, "strategy": strategy})
        row["selection"] = {
            "attributes_to_abstract": selection_column(sel.abstract, sel.abstract_group),
            "attributes_to_drop": selection_column(sel.drop, sel.drop_group),
            "attributes_to_keep": keep_column(keep, row["groups"]),
        }
        row["keep_in_instruction"] = bool(keep) and bool(rng.random() < params.keep_in_instruction_probability)


def base_instruction(row: dict[str, Any]) -> str:
    """"- strategy" lines: abstract targets, then drop targets, then (for some rows) the keep attributes."""
    lines = [f"- {t['strategy']}" for kind in ("abstract", "drop") for t in row["targets"] if t["kind"] == kind]
    if row.get("keep_in_instruction"):
        for name, entry in row["selection"]["attributes_to_keep"].items():
            lines.append(f"- Keep the {name.replace('_', ' ')} '{entry['value']}' as it is.")
    return "\n".join(lines)


def instructions(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask) -> None:
    """The base instruction and the model's natural rewording of it (the smoothed instruction)."""
    calls: list[Call] = []
    for row in alive(rows):
        row["sanitized"] = merged(row)
        row["base_instruction"] = base_instruction(row)

        def apply(answer: str, row=row) -> None:
            if not answer.strip():
                raise StepFailure("the smoothed instruction is empty")
            row["smoothed_instruction"] = answer.strip()

        calls.append(Call(row, make_request(recipe, "smooth", row=row, instruction=row["base_instruction"]), apply))
    run_calls(calls, ask, "smooth")


def to_benchmark_row(row: dict[str, Any]) -> dict[str, Any]:
    """A Privasis-Zero benchmark row (plus ``split`` and the pipeline's own record of what it did)."""
    return {
        "id": row["id"],
        "record_type": row["record_type"],
        "original_record": row["text"],
        "sanitized_record": row["sanitized"],
        "base_instruction": row["base_instruction"],
        "smoothed_instruction": row["smoothed_instruction"],
        **row["selection"],
        "grouped_annotated_attributes": row["groups"],
        "split": row.get("split"),
        "pipeline": {
            "chunks": len(row["chunks"]),
            "ranking": row["ranking"],
            "targets": [{k: t[k] for k in ("kind", "label", "strategy", "spans")} for t in row["targets"]],
            "verdict": row.get("verdict"),
            "usage": row.get("usage"),
        },
    }


def label(rows: list[dict[str, Any]], ctx: CorpusContext) -> None:
    """Judge the pipeline's rewrite with the protocol: ``vanilla`` if fully successful, ``hard`` if not.

    Rows without keep attributes cannot be scored: they get ``split: "unscored"``. A judge call that fails
    fails the row (it is tried again on a re-run).
    """
    todo = []
    for row in alive(rows):
        record = normalize_row(to_benchmark_row(row), row_number=0)
        if record.excluded:
            row["split"], row["verdict"] = "unscored", None
        else:
            todo.append((row, JudgeInput(record, row["sanitized"])))
    if not todo:
        return
    judge = Judge(ctx.judge_ask, ctx.judge_prompts, ctx.judge_settings)
    verdicts, _ = judge.judge([item for _, item in todo])
    for (row, _), verdict in zip(todo, verdicts):
        if verdict.status != "judged":
            fail(row, "label", f"the judge left this row {verdict.status}")
            continue
        row["split"] = "vanilla" if is_full_success(verdict) else "hard"
        row["verdict"] = verdict.to_dict()


def build_batch(inputs: list[dict[str, Any]], ctx: CorpusContext) -> list[dict[str, Any]]:
    """Run the whole pipeline over one batch; returns working rows (failed ones carry ``error``)."""
    recipe = ctx.recipe
    rows = prepare(inputs, recipe)
    rank(rows, recipe, ctx.ask)
    choose(rows, recipe)
    find_spans(rows, recipe, ctx.ask, require=True)
    write_strategies(rows, recipe, ctx.ask)
    rewrite_chunks(rows, recipe, ctx.ask)
    instructions(rows, recipe, ctx.ask)
    label(rows, ctx)
    return rows
