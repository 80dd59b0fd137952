"""The evaluation pipeline: sanitize -> judge -> score -> write (``privasis-bench run`` / ``evaluate``).

Every stage is resumable: the sanitize stage keeps finished outputs (``sanitized.jsonl``), the judge
stage keeps finished verdicts (``judged.jsonl``, see :mod:`privasis_bench.pipeline.checkpoint`) and the
response cache keeps every judge answer, so re-running a finished run makes no model call.
Scoring is always recomputed from the verdicts; results and samples files are written atomically."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from privasis_bench import __version__
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.loading import LoadedRecords
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.executor import Engine, run_together, usage_by_role
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.pipeline.checkpoint import CHECKPOINT_NAME
from privasis_bench.pipeline.flow import GivenOutputs, ModelOutputs, flow_window, ordered_flow
from privasis_bench.pipeline.judging import JudgeChoice, JudgeStep, spec_label
from privasis_bench.pipeline.sink import ResultSink
from privasis_bench.pipeline.spend import InvocationSpend, now, usage_delta
from privasis_bench.pipeline.sanitize import OutputJournal, SanitizedOutput
from privasis_bench.protocol.judge import run_sync
from privasis_bench.protocol.metrics import compute_metrics
from privasis_bench.protocol.presets import withhold_inexact_metrics
from privasis_bench.protocol.testee_prompt import describe_testee_prompt
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.results.files import (
    RESULTS_NAME,
    SAMPLES_NAME,
    git_revision,
    write_results,
)
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_ref, portable_name

SANITIZED_NAME = "sanitized.jsonl"



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


def is_complete(counts: dict[str, int], checks: RunChecks) -> bool:
    """Every record judged, and no failed model output unless those are knowingly scored as empty."""
    return (counts["unjudged"] == 0 and counts.get("missing_predictions", 0) == 0
            and (counts["failed_outputs"] == 0 or checks.score_failed_as_empty))



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



def evaluate_task(
    task: TaskConfig,
    loaded: LoadedRecords,
    plan: OutputPlan,
    choice: JudgeChoice,
    judge_engine: Engine | None,
    task_dir: Path,
    *,
    model_info: dict[str, Any],
    instruction: str,
    engines: Sequence[Engine] = (),
    usage_before: dict[str, dict[str, Any]] | None = None,
    limit: int | None = None,
    bootstrap_samples: int | None = None,
    seed: int | None = None,
    started: str | None = None,
    extra: dict[str, Any] | None = None,
    checks: RunChecks = RunChecks(),
    spend: InvocationSpend | None = None,
) -> EvalOutcome:
    """Get the outputs of ``loaded.scored`` (from the model or saved), judge them, compute metrics, write results.

    With ``spend``, this invocation's usage is measured by it and recorded in the task directory's ledger, and
    results carry every invocation's usage and the total (``usage_cumulative``).
    """
    started = started or now()
    step = JudgeStep(choice, task_dir / CHECKPOINT_NAME)
    # --score-failed-as-empty under the judge rule: a failed output is judged as "", as the official client reads it
    step.failed_as_empty = judged_as_empty = checks.score_failed_as_empty and choice.settings.empty_outputs == "judge"
    sink = ResultSink(task_dir / SAMPLES_NAME, official=choice.settings.parse_mode == "official", journal=plan.journal,
                      left_out=plan.left_out, failed_as_empty=judged_as_empty)
    try:
        flow_records(task, loaded, plan, step, judge_engine, sink)
        if plan.journal is not None:
            plan.journal.finish()
    finally:
        step.close()
        if plan.journal is not None:
            plan.journal.close()
        if spend is not None:
            spend.save()  # what was paid is on record even if the run stops here
    stats = step.stats
    mcfg = task.metrics
    samples = mcfg.bootstrap_samples if bootstrap_samples is None else bootstrap_samples
    seed = mcfg.bootstrap_seed if seed is None else seed
    metrics = compute_metrics(
        sink.tallies, bootstrap_samples=samples, seed=seed, confidence=mcfg.confidence, top_failed=mcfg.top_failed_attributes
    )
    results = {
        "harness": {"name": "privasis-bench", "version": __version__, "git_revision": git_revision()},
        "task": {"name": task.task, "version": task.version, "config_hash": task.config_hash(),
                 "source_file": file_ref(task.source_file)},
        "dataset": {
            **portable_dataset(task),
            "ids_hash": loaded.ids_hash,
            "limit": limit,
            "records_loaded": len(loaded),
            "invalid_rows": len(loaded.invalid),
        },
        "model": model_info,
        "instruction": instruction,
        "testee_prompt": describe_testee_prompt(task),
        "judge": choice.describe(),
        "parse_mode": choice.settings.parse_mode,
        "scoring_preset": None,  # "paper" when --preset paper set every comparability setting (``extra`` says so)
        "metrics": metrics,
        "counts": {
            "records_loaded": len(loaded),
            "excluded": len(loaded.excluded),
            "invalid_rows": len(loaded.invalid),
            "judged_records": sink.judged_records,
            "scored": metrics["scored_records"],
            "failed_outputs": len(sink.failed_ids),
            "failed_outputs_cut_at_budget": sink.failed_cut,
            "empty_outputs": sink.empty_outputs,
            "truncated_outputs": sink.truncated_outputs,
            "unjudged": len(sink.unjudged_ids),
            "unjudged_cut_at_budget": sink.unjudged_cut,
            "missing_predictions": len(sink.missing_ids),
            "unparseable": len(sink.unparseable_ids),
            "off_label": sink.off_label_count,
            "verdicts_reused_from_checkpoint": step.reused,
        },
        "judge_calls": stats.to_dict(),
        "checks": checks.to_dict(),
        "answer_policy": {e.role: e.answers.to_dict() for e in engines},
        "excluded_records": [{"id": r.id, "reason": r.excluded_reason} for r in loaded.excluded],
        # rows skipped with --skip-invalid: which, where and why (row numbers count from 1 in the source)
        "invalid_row_details": [{"id": r.record_id, "row": r.row_number, "field": r.field, "reason": r.message}
                                for r in loaded.invalid],
        "failed_output_records": sink.failed_ids,
        "unjudged_records": sink.unjudged_ids,
        "missing_prediction_records": sink.missing_ids,
        "unparseable_records": sink.unparseable_ids,
        "off_label_answers": [a.to_dict() for a in sink.off_label],
        "usage": spend.usage() if spend is not None else usage_delta(usage_before or {}, usage_by_role(engines)),
        "usage_cumulative": spend.finish("completed", judge_calls=stats.to_dict()) if spend is not None else None,
        "timestamps": {"started": started, "finished": now()},
        **(extra or {}),
    }
    results["complete"] = is_complete(results["counts"], checks)
    results["checks"]["passed"] = results["complete"] and sink.off_label_count <= checks.max_off_label
    withhold_inexact_metrics(results)  # an incomplete --preset paper run records no skip-rule number as the paper's
    try:
        sink.commit()
    finally:
        sink.close()
    write_results(task_dir / RESULTS_NAME, results)
    return EvalOutcome(task_dir, results)



def portable_dataset(task: TaskConfig) -> dict[str, Any]:
    """The dataset section of a results file, naming files portably (no local paths)."""
    cfg = task.dataset
    section = cfg.model_dump(include={"path", "name", "split", "revision"})
    files = cfg.data_files or []
    section["data_files"] = [file_ref(p) for p in files] or None
    section["source"] = ", ".join(portable_name(p) or "" for p in files) if files else cfg.describe()
    return section


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
