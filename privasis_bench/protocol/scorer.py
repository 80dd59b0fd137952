"""The Privasis-Sanitization judge protocol as a scorer (the ``privasis`` family's ``scorer`` target).

It offers the calls every scorer offers (:meth:`records`, :meth:`describe`, :meth:`stats`) and declares
``in_flow``: its verdicts are asked record by record, from the ``judge`` role's engine, while the model under test
writes (the runner's streamed flow, with its checkpoint of verdicts), instead of once over finished outputs.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.data.loading import LoadedRecords, load_records
from privasis_bench.data.stats import dataset_stats
from privasis_bench.tasks.config import TaskConfig


class PrivasisScorer:
    """The judge protocol for one task (see the module docstring)."""

    name = "privasis"
    #: judged record by record while the model writes (see the module docstring)
    in_flow = True

    def __init__(self, task: TaskConfig, *, skip_invalid: bool = False) -> None:
        self.task = task
        self.skip_invalid = skip_invalid
        self.notices: list[str] = []
        self.loaded: LoadedRecords | None = None

    def load(self, limit: int | None = None, *, stream: bool = True) -> LoadedRecords:
        """The task's records, with what was excluded or skipped on the way (one line when none is scored)."""
        self.loaded = load_records(self.task, skip_invalid=self.skip_invalid, limit=limit,
                                   stream=stream).require(self.task.task)
        return self.loaded

    def records(self, limit: int | None = None) -> list[Any]:
        """The records the protocol scores (excluded records left out)."""
        return list(self.load(limit, stream=False).scored)

    def stats(self) -> dict[str, Any]:
        """The data statistics of the loaded records (``data stats``)."""
        if self.loaded is None:
            self.load(stream=False)
        assert self.loaded is not None
        return dataset_stats(self.loaded)

    def describe(self) -> dict[str, Any]:
        """The scorer's name (the judge is described by the run's ``judge`` section)."""
        return {"name": self.name}
