"""The one runner of every family: outputs -> the family's scorer -> one run record (``run`` / ``evaluate``).

Every stage is resumable: the sanitize stage keeps finished outputs (``sanitized.jsonl``), a judged family keeps
finished verdicts (the Privasis checkpoint ``judged.jsonl``) and the response cache keeps every answer, so
re-running a finished run makes no model call. Scoring is always recomputed; results and samples files are written
atomically. What the scorer does is its own (:mod:`privasis_bench.tasks.scoring`).

``RunChecks``, ``EvalOutcome``, ``OutputPlan`` and ``TaskJob`` are re-exported from :mod:`privasis_bench.pipeline.job`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec, spec_label
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.executor import Engine, usage_by_role
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.pipeline.job import EvalOutcome, OutputPlan, RunChecks, TaskJob
from privasis_bench.pipeline.spend import now
from privasis_bench.protocol.testee_prompt import describe_testee_prompt
from privasis_bench.results.files import RESULTS_NAME
from privasis_bench.results.record import RunEnvelope, write_run_record

SANITIZED_NAME = "sanitized.jsonl"
__all__ = ["SANITIZED_NAME", "EngineOptions", "EvalOutcome", "OutputPlan", "RunChecks", "TaskJob", "evaluate_task",
           "model_description", "now", "role_models"]

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


def evaluate_task(job: TaskJob) -> EvalOutcome:
    """Evaluate one task of any family and write ``results.json`` and ``samples.jsonl`` to ``job.task_dir``.

    The family's scorer does its part (``scorer.evaluate(job)``, :mod:`privasis_bench.tasks.scoring`): a judge asked
    record by record while the model writes, or a scorer of the finished outputs asking its family's roles. The shared
    part of the results is the :class:`~privasis_bench.results.record.RunEnvelope`, and the file is checked against
    the family's schema as it is written. With ``job.spend``, this invocation's usage is measured and recorded in the
    task directory's ledger, and results carry every invocation's usage and the total (``usage_cumulative``).
    """
    started = job.started or now()
    scored = job.scorer.evaluate(job)
    envelope = RunEnvelope(
        job.task, job.model_info, job.instruction, describe_testee_prompt(job.task), dataset={**scored.dataset},
        started=started, checks=job.checks.to_dict(), answer_policy={e.role: e.answers.to_dict() for e in job.engines},
        usage=job.spend.usage() if job.spend is not None else usage_by_role(job.engines),
        usage_cumulative=scored.finish(job.spend) if job.spend is not None else None, roles=role_models(job.engines))
    results = envelope.assemble(scored.sections, complete=scored.complete, passed=scored.passed)
    write_run_record(job.task_dir / RESULTS_NAME, results, job.task.scorer)
    return EvalOutcome(job.task_dir, results)


def role_models(engines: Any) -> dict[str, dict[str, str]]:
    """``{role: {"label", "key"}}`` of a run's engines: the key is the spec's cache identity (provider, model and the
    arguments that change answers; never a secret or a host)."""
    return {e.role: {"label": spec_label(e.spec), "key": e.spec.cache_identity()}
            for e in sorted(engines, key=lambda e: e.role) if getattr(e, "spec", None) is not None}


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
