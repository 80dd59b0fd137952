"""Choosing what to sanitize and what to keep (recipe steps 2-4 of the decomposition pipeline).

Sensitivity ranks become **real** sampling weights: ``weight = floor + 1 / (rank + 1)``, normalized, and targets
are drawn *with those probabilities and without replacement*. (The reference script handed the weights to the
sampler's ``replace`` argument, which made its sampling uniform and with replacement; we do not repeat that.)
Everything here is deterministic given the ``numpy`` generator passed in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from privasis_bench.recipes.config import CorpusParams


@dataclass(frozen=True)
class Unit:
    """A candidate target: one attribute (``group`` False) or one named group of attributes."""

    name: str
    attrs: dict[str, Any]
    group: bool

    @property
    def values(self) -> list[Any]:
        return [v for v in self.attrs.values() if v not in (None, "", [], {})]


@dataclass
class Selection:
    """The targets of one row: abstract and drop units, whether each kind was chosen as groups, keep units."""

    abstract: list[Unit] = field(default_factory=list)
    drop: list[Unit] = field(default_factory=list)
    abstract_group: bool = False
    drop_group: bool = False
    keep: list[Unit] = field(default_factory=list)

    def targets(self) -> list[tuple[str, Unit]]:
        """(kind, unit) pairs: abstract targets first, then drop targets."""
        return [("abstract", u) for u in self.abstract] + [("drop", u) for u in self.drop]


def rank_weights(ranked: Sequence[str], names: Sequence[str], floor: float = 0.3) -> dict[str, float]:
    """Normalized weights from a ranking (most sensitive first); names the ranking omits share the last rank."""
    rank = {name: i for i, name in enumerate(ranked) if name in names}
    last = len(rank)
    raw = {n: floor + 1.0 / (rank.get(n, last) + 1) for n in names}
    total = sum(raw.values())
    return {n: w / total for n, w in raw.items()}


def top_ranked(ranked: Sequence[str], names: Sequence[str], fraction: float) -> list[str]:
    """The most sensitive ``fraction`` of ``names`` (all of them when there are 3 or fewer)."""
    if len(names) <= 3:
        return list(names)
    order = [n for n in ranked if n in names] + [n for n in names if n not in ranked]
    return order[: max(1, math.ceil(len(order) * fraction))]


def weighted_sample(names: Sequence[str], weights: dict[str, float], k: int, rng: np.random.Generator) -> list[str]:
    """``k`` distinct names drawn with probability proportional to their weights (without replacement)."""
    names = list(names)
    k = min(k, len(names))
    if k <= 0:
        return []
    p = np.array([weights[n] for n in names], dtype=float)
    p = p / p.sum()
    picked = rng.choice(len(names), size=k, replace=False, p=p)
    return [names[i] for i in picked]


def target_count(n_groups: int, params: CorpusParams, rng: np.random.Generator, *, rounding: str) -> int:
    """``Beta(a, b) * n_groups / 2`` rounded up (``ceil``) or to nearest (``round``)."""
    x = rng.beta(*params.count_beta) * max(n_groups, 1) / 2
    return math.ceil(x) if rounding == "ceil" else int(round(x))


def _units(attributes: dict[str, Any], groups: dict[str, dict[str, Any]]) -> tuple[list[Unit], list[Unit]]:
    singles = [Unit(n, {n: v}, False) for n, v in attributes.items() if v not in (None, "", [], {})]
    grouped = [Unit(g, {n: v for n, v in attrs.items() if v not in (None, "", [], {})}, True) for g, attrs in groups.items()]
    return singles, [u for u in grouped if u.attrs]


def select_targets(
    attributes: dict[str, Any],
    groups: dict[str, dict[str, Any]],
    ranking: dict[str, list[str]],
    params: CorpusParams,
    rng: np.random.Generator,
) -> Selection:
    """Abstract targets first, then drop targets, each as groups or as single attributes.

    ``ranking`` holds the model's order for ``"attributes"`` and ``"groups"`` (most sensitive first). Chosen
    units leave both pools (a chosen attribute also removes every group containing it). At least one target
    is always chosen, so every row has something to sanitize.
    """
    singles, grouped = _units(attributes, groups)
    pools = {False: singles, True: grouped}
    sel = Selection()
    n_groups = max(len(grouped), 1)
    for kind, group_p, rounding in (("abstract", params.abstract_group_probability, "ceil"),
                                    ("drop", params.drop_group_probability, "round")):
        as_group = bool(rng.random() < group_p) and bool(pools[True])
        if not as_group and not pools[False]:
            as_group = bool(pools[True])
        pool = pools[as_group]
        count = target_count(n_groups, params, rng, rounding=rounding)
        if kind == "drop" and not sel.abstract and count == 0:
            count = 1
        names = [u.name for u in pool]
        order = ranking.get("groups" if as_group else "attributes", [])
        # no usable ranking (recorded by the rank step): every unit is a candidate, with equal weights
        candidates = top_ranked(order, names, params.keep_top_fraction) if order else names
        weights = rank_weights(order, candidates, params.weight_floor)
        chosen = [next(u for u in pool if u.name == n) for n in weighted_sample(candidates, weights, count, rng)]
        setattr(sel, kind, chosen)
        setattr(sel, f"{kind}_group", as_group)
        taken = {a for u in chosen for a in u.attrs}
        pools[False] = [u for u in pools[False] if u.name not in taken]
        pools[True] = [u for u in pools[True] if u.name not in {c.name for c in chosen} and not taken & set(u.attrs)]
    return sel


def _flatten(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _flatten(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _flatten(v)]
    return [] if value is None else [str(value)]


def unigram_overlap(a: str, b: str) -> float:
    """ROUGE-1 F-measure between two texts (rouge-score's tokenizer: lower-cased alphanumeric words)."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"]).score(a, b)["rouge1"].fmeasure


def choose_keep(sel: Selection, attributes: dict[str, Any], params: CorpusParams, rng: np.random.Generator,
                groups: dict[str, dict[str, Any]] | None = None) -> list[Unit]:
    """1 or 2 remaining attributes or groups whose values share no word with the targets' values (ROUGE-1 = 0).

    A group is a candidate when none of its members is a target and its values together pass the same test."""
    taken = {a for _, u in sel.targets() for a in u.attrs}
    target_text = " ".join(s for _, u in sel.targets() for s in _flatten(list(u.attrs.values())))

    def clear(values: list[Any]) -> bool:
        words = " ".join(s for v in values for s in _flatten(v))
        return bool(words) and any(ch.isalnum() for ch in words) and unigram_overlap(target_text, words) == 0.0

    candidates = [Unit(n, {n: v}, False) for n, v in attributes.items() if n not in taken and clear([v])]
    candidates += [Unit(g, dict(attrs), True) for g, attrs in (groups or {}).items()
                   if attrs and not taken & set(attrs) and clear(list(attrs.values()))]
    if not candidates:
        return []
    low, high = params.keep_count
    k = min(len(candidates), int(rng.integers(low, high + 1)))
    picked = rng.choice(len(candidates), size=k, replace=False)
    return [candidates[i] for i in sorted(picked)]


def selection_column(units: list[Unit], as_group: bool) -> dict[str, Any]:
    """The benchmark schema for ``attributes_to_drop`` / ``attributes_to_abstract``."""
    if not units:
        return {"selected": None, "group": as_group}
    if as_group:
        return {"selected": [{"attrs": dict(u.attrs), "group_name": u.name} for u in units], "group": True}
    return {"selected": {n: v for u in units for n, v in u.attrs.items()}, "group": False}


def keep_column(units: list[Unit], groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The benchmark schema for ``attributes_to_keep``: ``{name: {value, sanitization, group_name}}`` (a kept group
    contributes one entry per member, each naming the group)."""
    group_of = {a: g for g, attrs in groups.items() for a in attrs}
    column: dict[str, Any] = {}
    for u in units:
        for name, value in u.attrs.items():
            column.setdefault(name, {"value": value, "sanitization": "keep", "group_name": u.name if u.group else group_of.get(name)})
    return column
