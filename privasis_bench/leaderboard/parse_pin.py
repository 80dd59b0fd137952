"""The judge-answer parse mode is a task setting the verifier pins, never a submitter's choice.

Under ``strict`` parsing an answer that is not one clean label makes its attribute unparseable; under ``official``
parsing the same answer is read by the reference evaluator's rule. Which mode a run was scored in changes which
answers count and how, so a run may not pick it: an entry whose ``results.json`` records a parse mode other than the
shipped task's ``judge.parse_mode`` is refused (in ``parse_mode`` and in ``judge.parse_mode``), and the re-judge
reads answers in the task's mode (:func:`privasis_bench.leaderboard.rejudge.settings_for`).
"""

from __future__ import annotations

from typing import Any, Mapping

from privasis_bench.tasks.config import TaskConfig


def parse_mode_problems(task: TaskConfig, results: Mapping[str, Any]) -> list[str]:
    """One line per place ``results`` records a parse mode other than the task's pinned one (empty: it is the
    task's)."""
    pinned = task.judge.parse_mode
    judge = results.get("judge") if isinstance(results.get("judge"), Mapping) else {}
    found = []
    for where, value in (("parse_mode", results.get("parse_mode")), ("judge.parse_mode", judge.get("parse_mode"))):
        if where == "judge.parse_mode" and "parse_mode" not in judge:
            continue  # older results record it at the top level only
        if value != pinned:
            found.append(f"{where} is {str(value)[:40]!r} but task {task.task!r} pins {pinned!r} (the parse mode is "
                         "the task's setting, not the run's: re-run without --parse-mode)")
    return found
