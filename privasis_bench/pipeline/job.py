"""One task evaluation as the runner sees it, whatever the family: :class:`TaskJob` in, :class:`EvalOutcome` out.

A job names the task, its family's scorer, where the outputs come from (:class:`OutputPlan`: the model under test
through its journal, or saved predictions), the engines of the roles the family declares, and how the run is checked
(:class:`RunChecks`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from privasis_bench.data.records import Record
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.engine.executor import Engine
from privasis_bench.pipeline.flow import GivenOutputs, ModelOutputs, model_outputs, stream_records
from privasis_bench.pipeline.sanitize import OutputJournal, SanitizedOutput
from privasis_bench.pipeline.spend import InvocationSpend
from privasis_bench.results.files import SAMPLES_NAME, write_samples
from privasis_bench.tasks.config import TaskConfig


@dataclass(frozen=True)
class RunChecks:
    """What makes a finished evaluation count as complete (anything else exits non-zero).

    ``score_failed_as_empty``: failed model outputs are scored as empty outputs (protocol §2: under the ``judge``
    empty-output rule they are shown to the judge as ``""``, as the official client reads a failed call) and the
    run still counts as complete; by default they make it incomplete, so a re-run retries them.
    ``max_off_label``: how many judge answers may be off-label (see :mod:`privasis_bench.protocol.labels`)
    before the command fails; they are read the official way and reported either way.
    """

    score_failed_as_empty: bool = False
    max_off_label: int = 0  # judge answers off the expected labels tolerated (official reading) before exiting 1
    #: the task's answer_policy settings in force (no command-line option overrode them), recorded in results
    tolerated_by_task: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"failed_outputs": "scored_as_empty" if self.score_failed_as_empty else "incomplete",
               "max_off_label": self.max_off_label}
        if self.tolerated_by_task:
            out["tolerated_by_task"] = dict(self.tolerated_by_task)
        return out


@dataclass
class EvalOutcome:
    """What one task evaluation produced."""

    task_dir: Path
    results: dict[str, Any]

    @property
    def ok(self) -> bool:
        """False when the results are incomplete or hold too many off-label answers (the CLI then exits 1)."""
        return bool(self.results["checks"]["passed"])


@dataclass
class OutputPlan:
    """Where a task's outputs come from: the model under test (through its journal) or saved predictions."""

    model_engine: Engine | None = None
    journal: OutputJournal | None = None
    given: dict[str, SanitizedOutput] | None = None
    left_out: frozenset[str] = frozenset()  # records with no saved prediction: not scored, listed in results

    def source(self, ask: Any) -> Any:
        """The output source for the record flow (``ask``: the model stream's, when there is a model)."""
        if self.journal is not None:
            return ModelOutputs(self.journal, ask)
        return GivenOutputs(self.given or {})


@dataclass
class TaskJob:
    """One task to evaluate (see the module docstring).

    ``records``: the scorer's own records, or the task's loaded dataset rows (``LoadedRecords``) for a scorer that
    reads them; ``roles``: one engine per role the family declares (``judge``, ``attacker``, ...); ``choice``: the
    judge settings of a family that resolves them from the task; ``preset``: the scoring preset that set every
    comparability setting (or None). The methods are the runner's services to the scorer
    (:mod:`privasis_bench.tasks.scoring`).
    """

    task: TaskConfig
    scorer: Any
    records: Any
    plan: OutputPlan
    task_dir: Path
    model_info: dict[str, Any]
    instruction: str
    roles: Mapping[str, Engine] = field(default_factory=dict)
    choice: Any = None
    engines: Sequence[Engine] = ()
    limit: int | None = None
    bootstrap_samples: int | None = None
    seed: int | None = None
    started: str | None = None
    checks: RunChecks = RunChecks()
    spend: InvocationSpend | None = None
    preset: str | None = None

    def bootstrap(self) -> tuple[int, int]:
        """(resamples, seed): the command's, else the task's."""
        mcfg = self.task.metrics
        return (mcfg.bootstrap_samples if self.bootstrap_samples is None else self.bootstrap_samples,
                mcfg.bootstrap_seed if self.seed is None else self.seed)

    @property
    def samples_path(self) -> Path:
        """Where the task's ``samples.jsonl`` goes."""
        return self.task_dir / SAMPLES_NAME

    def write_samples(self, rows: list[dict[str, Any]]) -> None:
        """Write ``samples.jsonl`` from finished rows."""
        write_samples(self.samples_path, rows)

    def finished_outputs(self) -> dict[str, SystemOutput]:
        """Every record's output: the model's (asked through the journal, earlier outputs reused) or the saved ones."""
        plan = self.plan
        if plan.journal is None:
            return dict(plan.given or {})
        try:
            return model_outputs(self.records, plan.journal, plan.model_engine, f"sanitize {self.task.task}")
        finally:
            plan.journal.close()

    def stream(self, records: Any, start: Callable[[Mapping[str, Any]], Any], emit: Callable[[Record, Any], None]) -> None:
        """The record flow over ``records`` (see :func:`privasis_bench.pipeline.flow.stream_records`): excluded records
        and those the saved predictions leave out are emitted unworked (None); the output journal is finished after a
        full pass and closed either way."""
        plan = self.plan
        try:
            stream_records(records, plan.source, plan.model_engine if plan.journal is not None else None, self.roles,
                           start, emit, skip=lambda r: r.excluded or r.id in plan.left_out, desc=self.task.task)
            if plan.journal is not None:
                plan.journal.finish()
        finally:
            if plan.journal is not None:
                plan.journal.close()
