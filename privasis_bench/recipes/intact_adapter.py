"""``intact:<spec>``: inference-guided generalization (after the INTACT method) around any base model.

``-m intact:llamacpp:smollm2`` sanitizes each record in steps, each a call through the wrapped model's own engine:
the targets are read from the instruction and their spans found chunk by chunk exactly as ``decomp:`` does; then,
for every distinct span of a target to generalize, the model proposes ``levels - 1`` replacements from most to
least specific (the last level is always the generic ``[redacted]``), and an attacker (``attacker=<spec>``, by
default the same model) guesses the original wording from the whole edited document. The most specific
replacement whose attack does not recover the span is kept (see :mod:`privasis_bench.recipes.intact` for the
matching rule); spans of targets to drop are removed.

It reads only the text and the instruction, never the gold targets, so it is rankable. Each result's usage is
the sum of its sub-calls' usage (the attacker's included); a failed sub-call fails that record. Arguments:
``attacker`` (a model spec without its own arguments), ``levels`` (default 4), ``guesses`` (attacker guesses per
candidate, default 3), ``max_spans`` (per target, default 3), ``recipe`` (default ``intact``),
``inner_concurrency`` (default 2); every other argument goes to the wrapped model.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.executor import Engine
from privasis_bench.errors import ModelSpecError
from privasis_bench.recipes.chunking import chunk_text
from privasis_bench.recipes.config import RecipeConfig, load_recipe
from privasis_bench.recipes.decomp_adapter import read_targets, request_rows, row_results, wrapped_engine
from privasis_bench.recipes.decompose import find_spans
from privasis_bench.recipes.intact import edited, edited_spans, plan_units, propose_candidates, select_levels
from privasis_bench.recipes.steps import Ask, alive

_WRAPPERS = ("intact", "decomp")


def sanitize_batch(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask, attack: Ask, *, levels: int = 4,
                   guesses: int = 3, max_spans: int = 3) -> list[dict[str, Any]]:
    """Rows with ``text`` and ``instruction`` -> the same rows with ``output`` (or ``error``), ``units`` and
    ``usage``; ``ask`` runs the sanitizer's steps and ``attack`` the inference attacks."""
    for row in rows:
        row["chunks"] = chunk_text(row["text"], recipe.corpus.chunk_chars)
    read_targets(rows, recipe, ask)
    find_spans(rows, recipe, ask, require=False)
    plan_units(rows, max_spans)
    propose_candidates(rows, recipe, ask, levels - 1)
    select_levels(rows, recipe, attack, guesses)
    for row in alive(rows):
        row["output"] = edited(row)
    return rows


def _wrapped_spec(text: str, args: dict[str, Any], what: str) -> ModelSpec:
    spec = ModelSpec.parse(text, args)
    if spec.provider in _WRAPPERS:
        raise ModelSpecError(f"intact cannot use another wrapper ({spec.provider}:) as its {what}")
    return spec


class IntactAdapter(Adapter):
    """Inference-guided generalization around any base model (rankable: reads no gold labels)."""

    provider = "intact"
    rankable = True
    reports_spans = True  # it knows what it replaced (checked against its output by the board's verifier)
    batched = True

    def __init__(self, model: str, **args: Any) -> None:
        super().__init__(model, **args)
        if not model:
            raise ModelSpecError("intact needs a wrapped model spec, e.g. intact:llamacpp:smollm2")
        base_args = dict(args)
        self.recipe = load_recipe(str(base_args.pop("recipe", "intact")))
        concurrency = int(base_args.pop("inner_concurrency", 2))
        self.levels = int(base_args.pop("levels", 4))
        self.guesses = int(base_args.pop("guesses", 3))
        self.max_spans = int(base_args.pop("max_spans", 3))
        if self.levels < 2 or self.guesses < 1 or self.max_spans < 1:
            raise ModelSpecError("intact needs levels >= 2 (one proposed level and the generic one), guesses >= 1 "
                                 "and max_spans >= 1")
        attacker = base_args.pop("attacker", None)
        self.base_spec = _wrapped_spec(model, base_args, "model")
        self.inner = wrapped_engine(self.base_spec, "intact", concurrency)
        self.attacker_spec = self.base_spec if attacker is None else _wrapped_spec(str(attacker), {}, "attacker")
        same = self.attacker_spec.key() == self.base_spec.key()
        self.attacker: Engine = self.inner if same else wrapped_engine(self.attacker_spec, "intact attacker", concurrency)

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Sanitize every request of the batch together (each step runs over the whole batch)."""
        rows = request_rows(requests, "intact")
        sanitize_batch(rows, self.recipe, lambda reqs, desc: self.inner.run(reqs, desc=f"intact {desc}"),
                       lambda reqs, desc: self.attacker.run(reqs, desc=f"intact {desc}"),
                       levels=self.levels, guesses=self.guesses, max_spans=self.max_spans)
        results = row_results(rows, "intact")
        for row, result in zip(rows, results):  # it knows what it replaced: span scorers need no alignment
            if result.ok:
                result.spans = edited_spans(row)
        return results

    async def aclose(self) -> None:
        """Release the wrapped model and the attacker."""
        if self.attacker is not self.inner:
            self.attacker.close()
        self.inner.close()
