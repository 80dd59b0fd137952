"""The task families the board knows, keyed by the scorer a task names (``scorer:`` in its YAML).

Every family goes through the same path: ``privasis-bench submit`` writes the same ``submission.json`` (name, owner,
track, file hashes), ``leaderboard verify`` runs the same file, provenance, ownership and bound checks, and
``leaderboard build`` puts every family's rows in the same ``privasis.json``, ``README.md`` and ``index.html``. A
family brings only what is its own:

* ``schema_versions``: the schemas its results and samples rows follow (``leaderboard/schemas/``);
* ``content``: the digest of what its board scores (outputs and verdicts or masks), so that a copy padded with
  unknown fields is still a copy (:mod:`.ownership`);
* ``recompute``: how the verifier recomputes its numbers from the outputs and the data it holds (None: the Privasis
  judge protocol, which :mod:`.verify` runs itself);
* ``row``: its board row (columns, rank key, facts) and ``viewer``: its per-record page.

Functions are named as ``"module:function"`` and imported on first use, so this registry imports no family module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from privasis_bench.tasks.family import DEFAULT_FAMILY as DEFAULT_SCORER


@dataclass(frozen=True)
class Family:
    """What one task family contributes to the shared board (see the module docstring)."""

    name: str
    schema_versions: Mapping[str, str]
    columns: tuple[tuple[str, str], ...]
    rank_key: str
    digits: int  # decimals the board shows its numbers with
    scale: str  # a line saying what the numbers are
    content: str
    recompute: str | None
    row: str
    viewer: str
    #: How a comparable group is ordered: (key, "higher"/"lower" is better), first key first; empty: ``rank_key``,
    #: higher is better.
    rank_by: tuple[tuple[str, str], ...] = ()
    tolerance: float = 1e-9  # largest difference between a submitted and a recomputed number that counts as equal

    def order(self) -> tuple[tuple[str, str], ...]:
        """The (key, better) pairs that rank a comparable group."""
        return self.rank_by or ((self.rank_key, "higher"),)

    def call(self, what: str, *args: Any, **kwargs: Any) -> Any:
        """Call one of the family's functions (``content``, ``recompute``, ``row``, ``viewer``)."""
        return resolve(getattr(self, what))(*args, **kwargs)


def resolve(target: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` name points to."""
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


PRIVASIS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("full_successful_record", "Full Successful Record"),
    ("sanitization_attribute", "San. Attr"),
    ("sanitization_attribute_per_record", "San. Att/Rec"),
    ("sanitization_record", "San. Rec"),
    ("retention_attribute", "Ret. Attr"),
    ("retention_attribute_per_record", "Ret. Att/Rec"),
    ("retention_record", "Ret. Rec"),
)
TAB_COLUMNS: tuple[tuple[str, str], ...] = (
    ("token_recall", "Token recall"), ("mention_recall", "Mention recall"),
    ("recall_direct_entities", "Entity recall (direct)"), ("recall_quasi_entities", "Entity recall (quasi)"),
    ("token_precision", "Token precision"), ("mention_precision", "Mention precision"), ("token_f1", "Token F1"),
)
#: Numbers of the replacement family within this of their recomputation agree (fractions: far below the board's
#: two decimals of a percentage, above float32 sentence-embedding noise between CPUs).
REPLACEMENT_TOLERANCE = 1e-6
#: The replacement-quality family's columns (:mod:`.replacement_family`), in percent.
REPLACEMENT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("trir", "TRIR ↓"), ("tps", "TPS"), ("nmi", "NMI"), ("token_recall", "TAB token recall"),
    ("recall_direct_entities", "TAB entity recall (direct)"), ("token_precision", "TAB token precision"),
)

FAMILIES: dict[str, Family] = {
    DEFAULT_SCORER: Family(
        name=DEFAULT_SCORER,
        schema_versions={"results": "results-1", "samples": "samples-row-1", "submission": "submission-1"},
        columns=PRIVASIS_COLUMNS, rank_key="full_successful_record", digits=2,
        scale="percentages with 95% bootstrap intervals over records",
        content="privasis_bench.leaderboard.scored_content:privasis_content", recompute=None,
        row="privasis_bench.leaderboard.rows:entry_row", viewer="privasis_bench.leaderboard.viewer:write_viewer"),
    "tab": Family(
        name="tab",
        schema_versions={"results": "tab-results-1", "samples": "tab-samples-row-1", "submission": "tab-submission-1"},
        columns=TAB_COLUMNS, rank_key="token_recall", digits=3,
        scale="fractions (TAB's measures, micro-averaged over annotators) with 95% bootstrap intervals over documents",
        content="privasis_bench.leaderboard.scored_content:tab_content",
        recompute="privasis_bench.leaderboard.tab_family:recompute",
        row="privasis_bench.leaderboard.tab_family:board_row",
        viewer="privasis_bench.leaderboard.tab_viewer:write_tab_viewer"),
    "tab_replacement": Family(
        name="tab_replacement",
        schema_versions={"results": "replacement-results-1", "samples": "replacement-samples-row-1",
                         "submission": "tab-submission-1"},
        columns=REPLACEMENT_COLUMNS, rank_key="trir", digits=1,
        scale=("percentages over documents: the replacement measures of the inference-attack-guided sanitization "
               "paper (TRIR with a 95% bootstrap interval, TPS with one, NMI without) beside TAB's detection measures; "
               "ranked by TRIR (lowest first), ties by TPS, only among entries scored with the same estimators"),
        content="privasis_bench.leaderboard.replacement_family:replacement_content",
        recompute="privasis_bench.leaderboard.replacement_family:recompute",
        row="privasis_bench.leaderboard.replacement_family:board_row",
        viewer="privasis_bench.leaderboard.tab_viewer:write_tab_viewer",
        rank_by=(("trir", "lower"), ("tps", "higher")), tolerance=REPLACEMENT_TOLERANCE),
}


class UnknownFamily(ValueError):
    """A results file names a scorer the board has no family for."""


def family_name(results: Mapping[str, Any]) -> str:
    """The scorer a results file names (``scorer.name``; the Privasis protocol when it names none)."""
    scorer = results.get("scorer") if isinstance(results, Mapping) else None
    name = scorer.get("name") if isinstance(scorer, Mapping) else None
    return DEFAULT_SCORER if scorer is None else str(name)


def family_of(results: Mapping[str, Any]) -> Family:
    """The family of a results file; raises :class:`UnknownFamily` naming the accepted scorers."""
    name = family_name(results)
    if name not in FAMILIES:
        raise UnknownFamily(f"scorer.name {name[:60]!r} has no board family; the board accepts {', '.join(FAMILIES)}")
    return FAMILIES[name]


def family_named(name: str | None) -> Family:
    """A family by name (the Privasis one for None or an unknown name: rows always render)."""
    return FAMILIES.get(name or DEFAULT_SCORER, FAMILIES[DEFAULT_SCORER])
