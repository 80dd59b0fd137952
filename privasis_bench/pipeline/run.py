"""The one runner of every family: outputs -> the family's scorer -> one run record (``run`` / ``evaluate``).

Every stage is resumable: the sanitize stage keeps finished outputs (``sanitized.jsonl``), the judge
stage keeps finished verdicts (``judged.jsonl``, see :mod:`privasis_bench.pipeline.checkpoint`) and the
response cache keeps every judge answer, so re-running a finished run makes no model call.
Scoring is always recomputed from the verdicts; results and samples files are written atomically. A family
whose scorer scores finished outputs (TAB, ...) takes the same entry point (:func:`evaluate_task`), through
:mod:`privasis_bench.pipeline.scored`.

``RunChecks``, ``EvalOutcome`` and ``OutputPlan`` are re-exported from :mod:`privasis_bench.pipeline.job`."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.loading import LoadedRecords
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.executor import Engine, run_together, usage_by_role
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.pipeline.checkpoint import CHECKPOINT_NAME
from privasis_bench.pipeline.flow import flow_window, ordered_flow
from privasis_bench.pipeline.job import EvalOutcome, OutputPlan, RunChecks, TaskJob, is_complete
from privasis_bench.pipeline.judging import JudgeStep, spec_label
from privasis_bench.pipeline.sanitize import SanitizedOutput
from privasis_bench.pipeline.scored import scored_sections
from privasis_bench.pipeline.sink import ResultSink
from privasis_bench.pipeline.spend import now, usage_delta
from privasis_bench.protocol.judge import run_sync
from privasis_bench.protocol.metrics import compute_metrics
from privasis_bench.protocol.presets import withhold_inexact_metrics
from privasis_bench.protocol.testee_prompt import describe_testee_prompt
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME
from privasis_bench.results.record import RunEnvelope, write_run_record
from privasis_bench.tasks.config import TaskConfig

SANITIZED_NAME = "sanitized.jsonl"
__all__ = ["SANITIZED_NAME", "EngineOptions", "EvalOutcome", "OutputPlan", "RunChecks", "TaskJob", "evaluate_task",
           "flow_records", "model_description", "now"]



@dataclass
class EngineOptions:
    """How engines are built (shared by the model under test and the judge)."""

    cache: ResponseCache | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = 4
    judge_concurrency: int | None = None
    progress: bool = True
    rpm: float | None = None  # model requests per minute (None: unpaced)
    judge_rpm: float | None = None
    answers: AnswerPolicy = field(default_factory=AnswerPolicy)  # empty / truncated answers of the model
    judge_answers: AnswerPolicy = field(default_factory=lambda: AnswerPolicy(truncated="accept"))

    def engine(self, spec: ModelSpec, role: str) -> Engine:
        """A new engine for ``spec`` under ``role`` ("model" or "judge")."""
        conc = self.concurrency if role == "model" else (self.judge_concurrency or self.concurrency)
        rpm = self.rpm if role == "model" else self.judge_rpm
        answers = self.answers if role == "model" else self.judge_answers
        return Engine(build_adapter(spec), spec, role=role, cache=self.cache, retry=self.retry, concurrency=conc,
                      rpm=rpm, progress=self.progress, answers=answers)



def flow_records(task: TaskConfig, loaded: LoadedRecords, plan: OutputPlan, step: JudgeStep, judge_engine: Engine | None,
                 sink: ResultSink) -> None:
    """Sanitize (or look up) and judge every scored record, handing each to ``sink`` in record order.

    The model and the judge work at the same time on one event loop, each under its own concurrency limit;
    each output is journaled and each verdict checkpointed the moment it exists.
    """
    model_engine = plan.model_engine if plan.journal is not None else None

    async def go() -> None:
        async with AsyncExitStack() as stack:
            ask = None
            if model_engine is not None:
                ask = (await stack.enter_async_context(model_engine.stream(f"sanitize {task.task}"))).ask
            if judge_engine is not None:
                step.ask = (await stack.enter_async_context(judge_engine.stream(f"judge {task.task}"))).ask
            source = plan.source(ask)

            async def one(record: Any) -> tuple[SanitizedOutput | None, RecordVerdict]:
                out = await source.output(record)
                return out, await step.verdict(record, out)

            await ordered_flow(loaded.iter_records(), lambda r: None if r.excluded or r.id in plan.left_out else one(r), sink,
                               window=flow_window(model_engine, judge_engine))

    engines = [e for e in (model_engine, judge_engine) if e is not None]
    if engines:
        run_together(engines, go)
    else:
        run_sync(go)



def evaluate_task(job: TaskJob) -> EvalOutcome:
    """Evaluate one task of any family and write ``results.json`` and ``samples.jsonl`` to ``job.task_dir``.

    A scorer judged in the flow (``in_flow``: the Privasis protocol) is asked record by record while the model
    writes; any other scorer scores the finished outputs, asking its family's roles. Either way the shared part of
    the results is the :class:`~privasis_bench.results.record.RunEnvelope` and the file is checked against the
    family's schema as it is written. With ``job.spend``, this invocation's usage is measured and recorded in the task
    directory's ledger, and results carry every invocation's usage and the total (``usage_cumulative``).
    """
    started = job.started or now()
    judged = bool(getattr(job.scorer, "in_flow", False))
    family, dataset, complete, passed, finish = (_judged_sections if judged else scored_sections)(job)
    envelope = RunEnvelope(
        job.task, job.model_info, job.instruction, describe_testee_prompt(job.task), dataset={**dataset},
        started=started, checks=job.checks.to_dict(), answer_policy={e.role: e.answers.to_dict() for e in job.engines},
        usage=(job.spend.usage() if job.spend is not None
               else usage_delta(job.usage_before or {}, usage_by_role(job.engines))),
        usage_cumulative=finish(job.spend) if job.spend is not None else None)
    results = envelope.assemble(family, complete=complete, passed=passed)
    write_run_record(job.task_dir / RESULTS_NAME, results, job.task.scorer)
    return EvalOutcome(job.task_dir, results)


def _judged_sections(job: TaskJob) -> tuple[dict[str, Any], dict[str, Any], bool, bool, Any]:
    """Get the outputs (from the model or saved), judge each as it lands, compute the metrics; the family's
    sections of the results, the dataset facts, complete, passed, and how the spend ledger is finished."""
    task, plan, choice, loaded, checks = job.task, job.plan, job.choice, job.records, job.checks
    step = JudgeStep(choice, job.task_dir / CHECKPOINT_NAME)
    # --score-failed-as-empty under the judge rule: a failed output is judged as "", as the official client reads it
    step.failed_as_empty = judged_as_empty = checks.score_failed_as_empty and choice.settings.empty_outputs == "judge"
    sink = ResultSink(job.task_dir / SAMPLES_NAME, official=choice.settings.parse_mode == "official",
                      journal=plan.journal, left_out=plan.left_out, failed_as_empty=judged_as_empty)
    try:
        flow_records(task, loaded, plan, step, job.roles.get("judge"), sink)
        if plan.journal is not None:
            plan.journal.finish()
    finally:
        step.close()
        if plan.journal is not None:
            plan.journal.close()
        if job.spend is not None:
            job.spend.save()  # what was paid is on record even if the run stops here
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
    family = {
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
    complete = is_complete(counts, checks)
    # an incomplete --preset paper run records no skip-rule number as the paper's (metrics is changed in place)
    withhold_inexact_metrics({**family, "checks": checks.to_dict()})
    try:
        sink.commit()
    finally:
        sink.close()
    return (family, dataset, complete, complete and sink.off_label_count <= checks.max_off_label,
            lambda spend: spend.finish("completed", judge_calls=stats.to_dict()))


def model_description(spec: ModelSpec, engine: Engine | None, *, max_tokens: int, temperature: float) -> dict[str, Any]:
    """The model section of a results file (``backend``: what an adapter reports about itself, e.g. its NER model)."""
    describe = getattr(engine.adapter, "describe", None) if engine is not None else None
    return {
        "label": spec_label(spec),
        "backend": describe() if callable(describe) else None,
        "key": spec.cache_identity(),  # no transport args: a published file names no host
        "spec": spec.to_dict(),
        "rankable": bool(getattr(engine.adapter, "rankable", True)) if engine is not None else None,
        "generation": {"max_tokens": max_tokens, "temperature": temperature},
    }
