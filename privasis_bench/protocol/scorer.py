"""The Privasis-Sanitization judge protocol as a scorer (the ``privasis`` family's ``scorer`` target).

It declares ``in_flow``: its verdicts are asked record by record, from the ``judge`` role's engine, while the model
under test writes (the runner's streamed flow, with its checkpoint of verdicts: ``pipeline/run``), instead of once
over finished outputs as the other families' scorers are. The judge's settings are the run's ``judge`` section.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.tasks.config import TaskConfig


class PrivasisScorer:
    """The judge protocol for one task (see the module docstring)."""

    name = "privasis"
    in_flow = True

    def __init__(self, task: TaskConfig) -> None:
        self.task = task
        self.notices: list[str] = []

    def describe(self) -> dict[str, Any]:
        """The scorer's name (the judge is described by the run's ``judge`` section)."""
        return {"name": self.name}
