"""The scorers a task may name (``scorer:`` in its YAML), by name.

``privasis`` (the default) is the judge-based protocol. Every other name maps to a *span scorer* class, imported only
when a task or a results file names it, so that the generic layers (pipeline, results) name no scorer package.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The scorer of tasks that do not name one: the judge-based Privasis protocol.
DEFAULT_SCORER = "privasis"
#: scorer name -> "module:class" of its span scorer.
SPAN_SCORERS: dict[str, str] = {
    "tab": "privasis_bench.tab.scorer:TabScorer",
    "tab_replacement": "privasis_bench.replacement.scorer:ReplacementScorer",
}


def scorer_names() -> list[str]:
    """Every scorer a task may name."""
    return [DEFAULT_SCORER, *sorted(SPAN_SCORERS)]


def span_scorer_class(name: str) -> Any | None:
    """The span scorer class registered under ``name`` (None for an unknown name or the default scorer)."""
    target = SPAN_SCORERS.get(name)
    if target is None:
        return None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)
