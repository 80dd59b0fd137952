"""Which scorer a task names, and the interface a span scorer offers the pipeline.

``privasis`` (the default) is the judge-based protocol, run by :mod:`privasis_bench.pipeline.run`. Every other
name in :data:`privasis_bench.tasks.scorers.SPAN_SCORERS` is a *span scorer*: an object built from the task that
turns documents into records, system outputs into metrics and samples rows, and reads its benchmark's own
predictions format; :mod:`privasis_bench.pipeline.scored` runs any of them the same way.
"""

from __future__ import annotations

from typing import Any, Protocol

from privasis_bench.data.records import Record
from privasis_bench.errors import TaskConfigError
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.scorers import DEFAULT_SCORER, scorer_names, span_scorer_class


class SpanScorer(Protocol):
    """What :mod:`privasis_bench.pipeline.scored` needs from a span scorer (see ``privasis_bench.tab.scorer``)."""

    name: str
    notices: list[str]  # lines a reader must see (what was left out or scored in an unusual way), kept in results

    def records(self, limit: int | None = None) -> list[Record]: ...

    def read_predictions(self, path: str) -> dict[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def score(self, outputs: dict[str, Any], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...


def span_scorer(task: TaskConfig) -> SpanScorer | None:
    """The span scorer ``task`` names, built for it; None for the judge-based default scorer."""
    if task.scorer == DEFAULT_SCORER:
        return None
    cls = span_scorer_class(task.scorer)
    if cls is None:
        raise TaskConfigError(task.source_file or task.task, "scorer",
                              f"unknown scorer {task.scorer!r}; known: {', '.join(scorer_names())}")
    return cls(task)
