"""The Privasis-Sanitization judge protocol as a scorer (the ``privasis`` family's ``scorer`` target).

It scores on the runner's record flow (``job.stream``): each record is judged, by the ``judge`` role's engine, as soon
as the model under test has written it, and each verdict is checkpointed in ``judged.jsonl`` so a re-run asks
nothing twice. Finished records go, in record order, to a :class:`~privasis_bench.protocol.sink.ResultSink` (the
samples file and compact tallies), from which the metrics are computed. The judge's settings are ``job.choice``
(resolved from the task's judge section) and are recorded as the run's ``judge`` section.
"""

from __future__ import annotations

from typing import Any, ClassVar

from privasis_bench.protocol.checkpoint import CHECKPOINT_NAME
from privasis_bench.protocol.judging import JudgeStep
from privasis_bench.protocol.metrics import compute_metrics
from privasis_bench.protocol.presets import withhold_inexact_metrics
from privasis_bench.protocol.sink import ResultSink
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.scoring import ScoredRun


class PrivasisScorer:
    """The judge protocol for one task (see the module docstring)."""

    name = "privasis"
    own_records: ClassVar[bool] = False  # the task's dataset rows, loaded by the runner (``job.records``)

    def __init__(self, task: TaskConfig) -> None:
        self.task = task
        self.notices: list[str] = []

    def describe(self) -> dict[str, Any]:
        """The scorer's name (the judge is described by the run's ``judge`` section)."""
        return {"name": self.name}

    def evaluate(self, job: Any) -> ScoredRun:
        """Get the outputs (from the model or saved), judge each as it lands and compute the metrics."""
        plan, choice, loaded, checks = job.plan, job.choice, job.records, job.checks
        step = JudgeStep(choice, job.task_dir / CHECKPOINT_NAME)
        # --score-failed-as-empty under the judge rule: a failed output is judged as "", as the official client reads it
        step.failed_as_empty = judged_as_empty = checks.score_failed_as_empty and choice.settings.empty_outputs == "judge"
        sink = ResultSink(job.samples_path, official=choice.settings.parse_mode == "official", journal=plan.journal,
                          left_out=plan.left_out, failed_as_empty=judged_as_empty)

        def start(asks: Any) -> Any:
            if "judge" in asks:
                step.ask = asks["judge"]

            async def judge(record: Any, out: Any) -> Any:
                return out, await step.verdict(record, out)
            return judge

        try:
            try:
                job.stream(loaded.iter_records(), start, sink)
            finally:
                step.close()
                if job.spend is not None:
                    job.spend.save()  # what was paid is on record even if the run stops here
            return self._sections(job, step, sink)
        finally:
            sink.close()  # drops a samples file that was not committed

    def _sections(self, job: Any, step: JudgeStep, sink: ResultSink) -> ScoredRun:
        task, choice, loaded, checks = job.task, job.choice, job.records, job.checks
        stats, mcfg = step.stats, task.metrics
        samples, seed = job.bootstrap()
        metrics = compute_metrics(sink.tallies, bootstrap_samples=samples, seed=seed, confidence=mcfg.confidence,
                                  top_failed=mcfg.top_failed_attributes)
        counts = {
            "records_loaded": len(loaded), "excluded": len(loaded.excluded), "invalid_rows": len(loaded.invalid),
            "judged_records": sink.judged_records, "scored": metrics["scored_records"],
            "failed_outputs": len(sink.failed_ids), "failed_outputs_cut_at_budget": sink.failed_cut,
            "empty_outputs": sink.empty_outputs, "truncated_outputs": sink.truncated_outputs,
            "unjudged": len(sink.unjudged_ids), "unjudged_cut_at_budget": sink.unjudged_cut,
            "missing_predictions": len(sink.missing_ids), "unparseable": len(sink.unparseable_ids),
            "off_label": sink.off_label_count, "verdicts_reused_from_checkpoint": step.reused,
        }
        sections = {
            "judge": choice.describe(),
            "parse_mode": choice.settings.parse_mode,
            "scoring_preset": job.preset,  # "paper" when --preset paper set every comparability setting
            "metrics": metrics,
            "counts": counts,
            "judge_calls": stats.to_dict(),
            "excluded_records": [{"id": r.id, "reason": r.excluded_reason} for r in loaded.excluded],
            # rows skipped with --skip-invalid: which, where and why (row numbers count from 1 in the source)
            "invalid_row_details": [{"id": r.record_id, "row": r.row_number, "field": r.field, "reason": r.message}
                                    for r in loaded.invalid],
            "failed_output_records": sink.failed_ids,
            "unjudged_records": sink.unjudged_ids,
            "missing_prediction_records": sink.missing_ids,
            "unparseable_records": sink.unparseable_ids,
            "off_label_answers": [a.to_dict() for a in sink.off_label],
        }
        dataset = {"ids_hash": loaded.ids_hash, "limit": job.limit, "records_loaded": len(loaded),
                   "invalid_rows": len(loaded.invalid)}
        # every record judged, and no failed model output unless those are knowingly scored as empty
        complete = (counts["unjudged"] == 0 and counts["missing_predictions"] == 0
                    and (counts["failed_outputs"] == 0 or checks.score_failed_as_empty))
        # an incomplete --preset paper run records no skip-rule number as the paper's (metrics is changed in place)
        withhold_inexact_metrics({**sections, "checks": checks.to_dict()})
        sink.commit()
        return ScoredRun(sections, dataset, complete, complete and sink.off_label_count <= checks.max_off_label,
                         lambda spend: spend.finish("completed", judge_calls=stats.to_dict()))
