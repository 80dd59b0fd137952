"""The scorer a task names (its family's ``scorer`` target, through :data:`~privasis_bench.tasks.family.FAMILIES`)
and the interface a scorer offers the runner.

A scorer is built from the task. It turns documents into records, reads its benchmark's own predictions format,
describes itself for results, and scores outputs: ``score(outputs, ...)`` gets, as ``roles=``, one engine per role
its family declares (an ``attacker`` it asks about each output, ...), each with ``run(requests, desc=...)``.
A scorer whose class sets ``in_flow`` (the judged Privasis protocol) is instead asked record by record while the
model writes, through the runner's streamed flow with its verdict checkpoint.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from privasis_bench.data.records import Record
from privasis_bench.errors import TaskConfigError
from privasis_bench.registry import UnknownName
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.family import FAMILIES, FamilySpec


class Scorer(Protocol):
    """What the runner needs from a scorer that scores finished outputs (see ``privasis_bench.tab.scorer``)."""

    name: str
    notices: list[str]  # lines a reader must see (what was left out or scored in an unusual way), kept in results

    def records(self, limit: int | None = None) -> list[Record]: ...

    def read_predictions(self, path: str) -> dict[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def score(self, outputs: dict[str, Any], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False, roles: Mapping[str, Any] = ...) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...


def family_of(task: TaskConfig) -> FamilySpec:
    """The family ``task`` belongs to (its ``scorer:``); one line naming the task file for an unknown one."""
    try:
        return FAMILIES.get(task.scorer)
    except UnknownName as exc:
        raise TaskConfigError(task.source_file or task.task, "scorer", str(exc)) from None


def in_flow(task: TaskConfig) -> bool:
    """True when the task's scorer is asked record by record while the model writes (see the module docstring)."""
    return bool(getattr(family_of(task).load("scorer"), "in_flow", False))


def span_scorer(task: TaskConfig) -> Scorer | None:
    """The scorer ``task`` names, built for it; None for an in-flow scorer (the runner's streamed flow scores it)."""
    if in_flow(task):
        return None
    return family_of(task).load("scorer")(task)
