"""Which scorer a task names (``scorer:`` in its YAML), and the interface a span scorer offers the pipeline.

``privasis`` (the default) is the judge-based protocol, run by :mod:`privasis_bench.pipeline.run`. Every other
name maps to a *span scorer*: an object built from the task that turns documents into records, system outputs
into metrics and samples rows, and reads its benchmark's own predictions format; :mod:`privasis_bench.pipeline.scored`
runs any of them the same way. A new scorer is one entry in :data:`SPAN_SCORERS` and its own subpackage.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from privasis_bench.data.records import Record
from privasis_bench.errors import TaskConfigError
from privasis_bench.tasks.config import DEFAULT_SCORER, TaskConfig

#: scorer name -> "module:class" of its span scorer (imported only when a task names it).
SPAN_SCORERS: dict[str, str] = {
    "tab": "privasis_bench.tab.scorer:TabScorer",
}


class SpanScorer(Protocol):
    """What :mod:`privasis_bench.pipeline.scored` needs from a span scorer (see ``privasis_bench.tab.scorer``)."""

    name: str

    def records(self, limit: int | None = None) -> list[Record]: ...

    def read_predictions(self, path: str) -> dict[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def score(self, outputs: dict[str, Any], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...


def scorer_names() -> list[str]:
    """Every scorer a task may name."""
    return [DEFAULT_SCORER, *sorted(SPAN_SCORERS)]


def span_scorer(task: TaskConfig) -> SpanScorer | None:
    """The span scorer ``task`` names, built for it; None for the judge-based default scorer."""
    if task.scorer == DEFAULT_SCORER:
        return None
    target = SPAN_SCORERS.get(task.scorer)
    if target is None:
        raise TaskConfigError(task.source_file or task.task, "scorer",
                              f"unknown scorer {task.scorer!r}; known: {', '.join(scorer_names())}")
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)(task)

