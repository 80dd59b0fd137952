"""The decomposition core shared by ``build-corpus`` and the ``decomp:`` adapter: spans, strategies, rewrites.

A row carries ``chunks`` (from :mod:`chunking`) and ``targets``: dicts with ``kind`` (abstract/drop), ``label``
(what the prompts call the target), ``values`` (known values, possibly none), ``strategy`` (set up front for
drop targets and for the adapter, written by the model for abstract targets) and, after :func:`find_spans`,
``spans``: ``{chunk index: [spans]}``. Rewrites go target by target (so a later target sees earlier edits)
and, within one target, over all its chunks in one batch with the same strategy.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from privasis_bench.recipes.config import RecipeConfig
from privasis_bench.recipes.steps import (
    Ask,
    Call,
    StepFailure,
    alive,
    clean_answer,
    fail,
    list_items,
    make_request,
    run_calls,
)

_NONE = re.compile(r"^\W*(none|no spans?|nothing|n/?a)\W*$", re.I)
_FINAL_PUNCT = ".!?;:"


def _values_text(values: Sequence[Any]) -> str:
    return "; ".join(str(v) for v in values) if values else "(not given)"


def locate(span: str, chunk: str) -> str | None:
    """The exact substring of ``chunk`` that ``span`` refers to (case-insensitive, any whitespace), or None."""
    words = span.strip().strip("\"'`").split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    # no match inside a longer word or number ("34" is not found in "2034")
    pattern = (r"(?<!\w)" if words[0][0].isalnum() else "") + pattern + (r"(?!\w)" if words[-1][-1].isalnum() else "")
    m = re.search(pattern, chunk, re.I)
    return m.group(0) if m else None


def verbatim_values(values: Sequence[Any], chunk: str) -> list[str]:
    """Known values (list items and dict values included) found verbatim in ``chunk``."""
    flat: list[str] = []
    for v in values:
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else [v]
        flat += [str(i) for i in items if i not in (None, "") and len(str(i)) > 1]
    return [found for f in flat if (found := locate(f, chunk))]


def _span_answer(answer: str) -> list[str]:
    if not answer.strip() or _NONE.match(answer.strip()):
        return []
    return [s for s in list_items(answer) if not _NONE.match(s)]


def _probes(target: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """What the spans step asks about for a target: (label, values) per member attribute of a group target (each
    must be found, as in the reference), else the target itself."""
    attrs = target.get("attrs") or {}
    if target.get("group") and attrs:
        group = target.get("name") or target["label"]
        return [(f"{group}: {name.replace('_', ' ')}", [value]) for name, value in attrs.items()]
    return [(target["label"], list(target.get("values") or []))]


def find_spans(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask, *, require: bool) -> None:
    """Ask, per (chunk, target), which spans refer to the target; locate them; re-ask once for unlocated ones
    (when the recipe has a ``spans_retry`` prompt).

    A group target is asked about attribute by attribute. Verbatim occurrences of known values count as spans
    too. With ``require``, a target (or a member attribute of a group target) with no span in any chunk fails
    its row; otherwise it is left with what was found (possibly nothing to rewrite).
    """
    unlocated: list[tuple[dict[str, Any], dict[str, Any], int, str, list[str]]] = []
    calls: list[Call] = []
    for row in alive(rows):
        for t, target in enumerate(row["targets"]):
            target["spans"] = {}
            target["found"] = {}
            for p, (label, values) in enumerate(_probes(target)):
                target["found"][label] = False
                for i, chunk in enumerate(row["chunks"]):
                    if not chunk.strip():
                        continue

                    def apply(answer: str, row=row, target=target, i=i, chunk=chunk, label=label, values=values) -> None:
                        found, missing = [], []
                        for span in _span_answer(answer):
                            (found if (hit := locate(span, chunk)) else missing).append(hit or span)
                        found += verbatim_values(values, chunk)
                        _add(target, i, found, label)
                        if missing:
                            unlocated.append((row, target, i, label, missing))

                    request = make_request(recipe, "spans", row=row, draw=f"spans {t}/{p}/{i}", chunk=chunk, target=label,
                                           values=_values_text(values))
                    calls.append(Call(row, request, apply))
    run_calls(calls, ask, "spans")
    retry: list[Call] = []
    for n, (row, target, i, label, missing) in enumerate(unlocated if "spans_retry" in recipe.prompts else ()):
        chunk = row["chunks"][i]

        def apply_retry(answer: str, target=target, i=i, chunk=chunk, label=label) -> None:
            _add(target, i, [hit for span in _span_answer(answer) if (hit := locate(span, chunk))], label)

        request = make_request(recipe, "spans_retry", row=row, draw=f"spans retry {label}/{i}", chunk=chunk, target=label,
                               unlocated="\n".join(f"- {m}" for m in missing))
        retry.append(Call(row, request, apply_retry))
    run_calls(retry, ask, "spans_retry")
    for row in alive(rows):
        for target in row["targets"]:
            lost = [label for label, ok in target.pop("found", {}).items() if not ok]
            if require and lost:
                what = f"target {target['label']!r}" if lost == [target["label"]] else f"{lost[0]!r} (a member of group target {target['label']!r})"
                fail(row, "spans", f"{what}: no span found in any chunk")
                break


def _add(target: dict[str, Any], index: int, spans: list[str], label: str) -> None:
    unique = [s for s in dict.fromkeys(spans) if s.strip()]
    if unique:
        target["found"][label] = True
        target["spans"].setdefault(str(index), [])
        target["spans"][str(index)] = list(dict.fromkeys(target["spans"][str(index)] + unique))


def write_strategies(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask) -> None:
    """One generalization strategy per abstract target without one, grounded in all its chunks."""
    calls: list[Call] = []
    for row in alive(rows):
        for target in row["targets"]:
            if target.get("strategy") or not target["spans"]:
                continue
            context = "\n...\n".join(row["chunks"][int(i)].strip() for i in sorted(target["spans"], key=int))

            def apply(answer: str, target=target) -> None:
                lines = list_items(answer)
                if not lines:
                    raise StepFailure(f"target {target['label']!r}: the strategy answer is empty")
                target["strategy"] = lines[0]

            request = make_request(recipe, "strategy", row=row, draw=f"strategy {target['label']}", context=context, target=target["label"], values=_values_text(target["values"]))
            calls.append(Call(row, request, apply))
    run_calls(calls, ask, "strategy")


def _edges(chunk: str) -> tuple[str, str, str]:
    core = chunk.strip()
    if not core:
        return chunk, "", ""
    start = chunk.index(core)
    return chunk[:start], core, chunk[start + len(core):]


def splice(chunk: str, rewritten: str) -> str:
    """Put a rewritten chunk body back between the original's surrounding whitespace, keeping its final mark."""
    lead, core, trail = _edges(chunk)
    new = rewritten.strip()
    if new and core and core[-1] in _FINAL_PUNCT and new[-1] not in _FINAL_PUNCT + "\"')]":
        new += core[-1]
    return lead + new + trail


def rewrite_chunks(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask) -> None:
    """Apply each target's strategy to every chunk it occurs in, target after target."""
    depth = max((len(r["targets"]) for r in alive(rows)), default=0)
    for k in range(depth):
        calls: list[Call] = []
        for row in alive(rows):
            if k >= len(row["targets"]):
                continue
            target = row["targets"][k]
            for i, spans in sorted(target["spans"].items(), key=lambda kv: int(kv[0])):
                chunk = row["chunks"][int(i)]

                def apply(answer: str, row=row, i=int(i), target=target) -> None:
                    if not answer.strip():
                        raise StepFailure(f"target {target['label']!r}: the rewrite of chunk {i} is empty")
                    row["chunks"][i] = splice(row["chunks"][i], answer)

                body = _edges(chunk)[1]
                # a rewrite is about as long as its chunk (~4 characters per token): twice that is plenty
                request = make_request(recipe, "rewrite", row=row, draw=f"rewrite {k}/{i}", chunk=body, strategy=target["strategy"],
                                       spans="\n".join(f"- {s}" for s in spans), max_tokens=len(body) // 2 + 64)
                calls.append(Call(row, request, apply))
        run_calls(calls, ask, f"rewrite target {k + 1}")


def merged(row: dict[str, Any]) -> str:
    """The rewritten text: the chunks joined back together."""
    return "".join(row["chunks"])


def answer_text(answer: str) -> str:
    """A model's free-text answer (after ``</think>``, without fences)."""
    return clean_answer(answer)
