"""The scorer a task names (its family's ``scorer`` target, through :data:`~privasis_bench.tasks.family.FAMILIES`)
and the interface a scorer offers the runner (``evaluate(job)``, see :mod:`privasis_bench.tasks.scoring`).

A scorer with ``own_records`` (TAB, replacement quality, a plug-in ...) turns its own documents into records, reads its
benchmark's own predictions format and scores the finished outputs; the others (the Privasis judge) score the task's
dataset rows, which the runner loads with the task's judge settings.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.errors import TaskConfigError
from privasis_bench.registry import UnknownName
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.family import FAMILIES, FamilySpec


def family_of(task: TaskConfig) -> FamilySpec:
    """The family ``task`` belongs to (its ``scorer:``); one line naming the task file for an unknown one."""
    try:
        return FAMILIES.get(task.scorer)
    except UnknownName as exc:
        raise TaskConfigError(task.source_file or task.task, "scorer", str(exc)) from None


def own_records(task: TaskConfig) -> bool:
    """True when the task's scorer reads its own documents (see the module docstring)."""
    return bool(family_of(task).load("scorer").own_records)


def span_scorer(task: TaskConfig) -> Any:
    """The scorer ``task`` names, built for it, when it reads its own documents; None for a scorer of the task's rows."""
    if not own_records(task):
        return None
    return family_of(task).load("scorer")(task)
