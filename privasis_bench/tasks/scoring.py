"""The one interface between the runner and a family's scorer: ``scorer.evaluate(job)`` returns a :class:`ScoredRun`.

Every family's scorer is built from the task (``Scorer(task)``) and offers ``evaluate(job)``. The job
(:class:`privasis_bench.pipeline.job.TaskJob`) carries the task, the engines of the roles the family declares
(``job.roles``), where the outputs come from, the run's checks and spend ledger, and the runner's services:

* ``job.finished_outputs()``: every record's output (the model asked through its journal, or saved predictions);
* ``job.stream(records, start, emit)``: the record flow, for a scorer that works on each output as the model writes it
  (``start(asks)`` gets each role's ask function once the role streams are open and returns the per-record work);
* ``job.write_samples(rows)``, ``job.samples_path`` and ``job.bootstrap()``.

The scorer returns its own sections of ``results.json``, the dataset facts, whether the run is complete and passed,
and how the spend ledger is finished; the runner adds the shared envelope. Scorers of finished outputs (TAB,
replacement quality, SPIA, a plug-in ...) inherit :class:`OutputScorer` and implement ``score(outputs, ...)``;
``own_records`` says whether the scorer reads its own documents (``records()``, ``read_predictions()``) or the task's
dataset rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Sequence

from privasis_bench.tasks.family import FAMILIES


@dataclass(frozen=True)
class ScoredRun:
    """A family's part of one evaluation, as its scorer hands it to the runner."""

    sections: dict[str, Any]  # the family's sections of results.json (metrics, counts, its own lists ...)
    dataset: dict[str, Any]  # facts about the scored data (limit, records loaded, ...)
    complete: bool
    passed: bool
    finish: Callable[[Any], Any]  # spend ledger -> every invocation's usage, once this one is recorded


class OutputScorer:
    """Base of a scorer that scores finished outputs: ``score(outputs, ...)`` is asked once, after the model wrote."""

    name: ClassVar[str]
    own_records: ClassVar[bool] = True
    notices: Sequence[str] = ()  # lines a reader must see (what was left out or scored unusually), kept in results

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
