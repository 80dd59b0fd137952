"""The scorer a task names (its family's ``scorer`` target, through :data:`~privasis_bench.tasks.family.FAMILIES`)
and the one set-up of a task every command goes through (``setup_task``: the scorer's ``setup``, see
:mod:`privasis_bench.tasks.scoring`)."""

from __future__ import annotations

from typing import Any

from privasis_bench.data.loading import with_data_files
from privasis_bench.errors import TaskConfigError
from privasis_bench.protocol.testee_prompt import with_testee_prompt
from privasis_bench.registry import UnknownName
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.family import FAMILIES, FamilySpec
from privasis_bench.tasks.scoring import Setup


def family_of(task: TaskConfig) -> FamilySpec:
    """The family ``task`` belongs to (its ``scorer:``); one line naming the task file for an unknown one."""
    try:
        return FAMILIES.get(task.scorer)
    except UnknownName as exc:
        raise TaskConfigError(task.source_file or task.task, "scorer", str(exc)) from None


def setup_task(task: TaskConfig, opts: Any, **how: Any) -> Setup:
    """One task as a command runs it: ``opts.data_files`` (``--data-files``, comma-separated or repeated) and the
    testee prompt options applied, then set up by its scorer (``how``: ``load``, ``stream``, ``all_records``)."""
    files = [f.strip() for value in getattr(opts, "data_files", None) or [] for f in value.split(",") if f.strip()]
    task = with_data_files(task, files) if files else task
    task = with_testee_prompt(task, getattr(opts, "prompt_template", None), getattr(opts, "answer_cue", None))
    return family_of(task).load("scorer").setup(task, opts, **how)
