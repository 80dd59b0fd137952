"""The one interface between the commands, the runner and a family's scorer.

Every family's scorer class offers ``setup(task, opts)``: the task as the scorer reads it, the scorer built for it,
its records and its settings (a :class:`Setup`), whatever the command (``run``, ``evaluate``, ``sanitize``,
``--plan``, ``data inspect``). The Privasis judge loads the task's dataset rows and resolves its judge there; a
scorer of its own documents (TAB, replacement quality, SPIA, a plug-in ...) reads them. A scorer then offers
``predictions(path, label, saved)`` (a saved-outputs file as outputs), ``planner(task_dir)`` (what scoring each record
asks its roles, for ``--plan``) and ``evaluate(job)``, which returns a :class:`ScoredRun`.

The job (:class:`privasis_bench.pipeline.job.TaskJob`) carries the task, the engines of the roles the family declares
(``job.roles``), where the outputs come from, the run's checks and spend ledger, and the runner's services:

* ``job.finished_outputs()``: every record's output (the model asked through its journal, or saved predictions);
* ``job.stream(records, start, emit)``: the record flow, for a scorer that works on each output as the model writes it
  (``start(asks)`` gets each role's ask function once the role streams are open and returns the per-record work);
* ``job.write_samples(rows)``, ``job.samples_path`` and ``job.bootstrap()``.

The scorer returns its own sections of ``results.json``, the dataset facts, whether the run is complete and passed,
and how the spend ledger is finished; the runner adds the shared envelope. Scorers of finished outputs inherit
:class:`OutputScorer` and implement ``score(outputs, ...)``, ``records(limit)`` and ``read_predictions(path)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

from privasis_bench.errors import PrivasisError
from privasis_bench.tasks.family import FAMILIES


class Documents(list):  # type: ignore[type-arg]
    """A scorer's own records, read as a task's loaded rows are (none excluded, no invalid row)."""

    invalid: Sequence[Any] = ()

    def __init__(self, records: Sequence[Any], source: str) -> None:
        super().__init__(records)
        self.source = source  # the files they were read from

    @property
    def records(self) -> list[Any]:
        """Every record."""
        return list(self)

    scored = records


@dataclass(frozen=True)
class Setup:
    """One task as a command runs it: the task as its scorer reads it, the scorer, its records (``.records``,
    ``.scored``, ``.invalid``), the judge settings of a family that resolves them from the task (else None) and the
    instruction variant."""

    task: Any
    scorer: Any
    records: Any
    choice: Any = None
    instruction: str = "base"


@dataclass(frozen=True)
class ScoredRun:
    """A family's part of one evaluation, as its scorer hands it to the runner."""

    sections: dict[str, Any]  # the family's sections of results.json (metrics, counts, its own lists ...)
    dataset: dict[str, Any]  # facts about the scored data (limit, records loaded, ...)
    complete: bool
    passed: bool
    finish: Callable[[Any], Any]  # spend ledger -> every invocation's usage, once this one is recorded


@dataclass(frozen=True)
class RowChecks:
    """What a scorer's ``row_checks(results, rows, metrics)`` finds in a run's samples rows for ``rescore``
    (``metrics``: the recomputed ones as the family records them, when its rules change them)."""

    contradictions: list[Any] = field(default_factory=list)  # verdicts the rows' outputs and answers do not support
    row_problems: list[str] = field(default_factory=list)  # rows the task does not allow
    count_differences: list[str] = field(default_factory=list)  # counts and id lists the rows do not support
    setting_problems: list[str] = field(default_factory=list)  # settings results.json records against its preset
    metrics: dict[str, Any] | None = None


class OutputScorer:
    """Base of a scorer that scores finished outputs: ``score(outputs, ...)`` is asked once, after the model wrote."""

    name: ClassVar[str]
    notices: Sequence[str] = ()  # lines a reader must see (what was left out or scored unusually), kept in results
    predictions_format: str | None = None  # the format read_predictions last read (default: <name>-masked-spans)

    @classmethod
    def setup(cls, task: Any, opts: Any, *, load: bool = True, **_: Any) -> Setup:
        """The scorer's own documents (the first ``opts.limit``; none with ``load`` False), one instruction each;
        ``--judge`` (unless the family asks a judge) and ``--instruction`` are refused."""
        judge = getattr(opts, "judge", None)
        judge = judge if judge != "none" and "judge" not in FAMILIES.get(task.scorer).roles else None
        for flag, value in (("--judge", judge), ("--instruction", getattr(opts, "instruction", None))):
            if value:
                raise PrivasisError(f"{flag} does not apply to task {task.task} (scorer {task.scorer}: no judge, one "
                                    "instruction per document); drop it")
        scorer = cls(task)
        if not task.dataset.data_files:  # found through the scorer's data folder: record which file
            task = task.with_data_files(scorer.data_files())
            scorer = cls(task)
        records = scorer.records(limit=getattr(opts, "limit", None)) if load else []
        return Setup(task, scorer, Documents(records, ", ".join(task.dataset.data_files or [])))

    def predictions(self, path: Any, label: str | None, saved: Callable[[Any], Any]) -> tuple[Any, Any, frozenset[str]]:
        """A predictions file in the scorer's own format (TAB: ``{doc_id: [[start, end], ...]}``): outputs, the model
        section of the results, and no record left out here (the scorer marks what the file omits in its rows)."""
        outputs = self.read_predictions(str(path))
        label = label or f"predictions:{path.name}"
        model_info = {"label": label, "key": label, "spec": None, "rankable": None, "generation": None,
                      "predictions": {"path": path.name, "format": self.predictions_format or f"{self.name}-masked-spans",
                                      "documents": len(outputs)}}
        return outputs, model_info, frozenset()

    def read_predictions(self, path: str) -> dict[str, Any]:
        """A saved predictions file in the scorer's own format, as outputs by record id."""
        raise NotImplementedError

    def planner(self, task_dir: Any) -> Callable[..., None]:
        """What scoring one record asks its roles (``--plan``): ``plan_record(record, output, plans, cached)`` counts
        :meth:`role_requests` of the output (the record's text while it is not written) in the role's plan, each
        answered if ``cached(role, request)``."""
        def plan_record(record: Any, output: str | None, plans: Mapping[str, Any], cached: Callable[[str, Any], bool]) -> None:
            for role, requests in self.role_requests(record, record.text if output is None else output).items():
                for ask in requests if role in plans else ():
                    if cached(role, ask):
                        plans[role].answered += 1
                    else:
                        plans[role].add(ask)
        return plan_record

    def score(self, outputs: dict[str, Any], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False, roles: Mapping[str, Any] = ...) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The metrics and one samples row per record (``roles``: one engine per role the family declares)."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """The scorer's name and settings, recorded under ``scorer`` in results."""
        raise NotImplementedError

    def role_requests(self, record: Any, text: str) -> dict[str, list[Any]]:
        """What scoring one record's output ``text`` asks each role, at most (read by ``run --plan``); none here."""
        return {}

    def evaluate(self, job: Any) -> ScoredRun:
        """Score the job's finished outputs (asking the family's roles) and write ``samples.jsonl``."""
        task, checks, outputs = job.task, job.checks, job.finished_outputs()
        samples, seed = job.bootstrap()
        asks = {"roles": dict(job.roles)} if FAMILIES.get(task.scorer).roles else {}
        metrics, rows = self.score(outputs, bootstrap_samples=samples, seed=seed, confidence=task.metrics.confidence,
                                   failed_as_empty=checks.score_failed_as_empty, **asks)
        left_out = [r["id"] for r in rows if r.get("left_out")]  # the predictions file omits them: not failures
        failed = [r["id"] for r in rows
                  if not r.get("left_out") and (outputs.get(r["id"]) is None or outputs[r["id"]].error)]
        counts = {"records_loaded": len(job.records), "excluded": 0, "left_out": len(left_out), "invalid_rows": 0,
                  "scored": sum(r["scored"] for r in rows), "failed_outputs": len(failed),
                  "empty_outputs": sum(1 for o in outputs.values() if o.text == ""), "truncated_outputs": 0,
                  "unjudged": 0, "unparseable": 0, "off_label": 0}
        if job.spend is not None:
            job.spend.save()
        sections = {"scorer": self.describe(), "judge": None, "metrics": metrics, "counts": counts,
                    "failed_output_records": failed, "left_out_records": left_out, "notices": list(self.notices)}
        complete = not failed or checks.score_failed_as_empty
        job.write_samples(rows)
        dataset = {"limit": job.limit, "records_loaded": len(job.records), "invalid_rows": 0}
        return ScoredRun(sections, dataset, complete, complete, lambda spend: spend.save())
