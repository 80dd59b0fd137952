"""Running a task whose scorer is a span scorer (``scorer: tab`` ...): outputs -> the scorer's metrics -> files.

The model under test is asked exactly as for the Privasis tasks (the task's prompt template, the record's
instruction, the output journal ``sanitized.jsonl`` that makes the run resumable, the response cache); saved
predictions in the scorer's own format can stand in for the model. There is no judge: the scorer computes its
metrics from the outputs (and the spans masking systems report). ``results.json`` and ``samples.jsonl`` have the
same shape as the Privasis ones, with the scorer's name and settings recorded under ``scorer``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from privasis_bench import __version__
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.engine.executor import Engine, usage_by_role
from privasis_bench.pipeline.run import EvalOutcome, RunChecks, portable_dataset
from privasis_bench.pipeline.sanitize import OutputJournal, SanitizedOutput
from privasis_bench.pipeline.scorers import SpanScorer
from privasis_bench.pipeline.spend import InvocationSpend, now, usage_delta
from privasis_bench.protocol.testee_prompt import describe_testee_prompt
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME, git_revision, write_results, write_samples
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_ref


def model_outputs(records: Sequence[Any], journal: OutputJournal, engine: Engine, desc: str) -> dict[str, SystemOutput]:
    """Every record's output from the model (earlier journal lines reused), journaled as each lands."""
    requests = [journal.request(r) for r in records]
    outputs: dict[str, SanitizedOutput] = {}
    todo: list[int] = []
    for i, (record, request) in enumerate(zip(records, requests)):
        earlier = journal.reusable(record, request)
        if earlier is not None:
            outputs[record.id] = earlier
        else:
            todo.append(i)

    def landed(j: int, result: Any) -> None:
        i = todo[j]
        outputs[records[i].id] = journal.land(records[i], requests[i], result)

    if todo:
        engine.run([requests[i] for i in todo], desc=desc, on_result=landed)
    for record in records:
        journal.keep(outputs[record.id])
    journal.finish()
    return {rid: SystemOutput(text=o.output, spans=o.spans, error=None if o.ok else (o.error or "failed"),
                              replacements=o.replacements) for rid, o in outputs.items()}


def evaluate_span_task(task: TaskConfig, scorer: SpanScorer, outputs: dict[str, SystemOutput], task_dir: Path, *,
                       records: Sequence[Any], model_info: dict[str, Any], instruction: str,
                       engines: Sequence[Engine] = (), usage_before: dict[str, dict[str, Any]] | None = None,
                       limit: int | None = None, bootstrap_samples: int | None = None, seed: int | None = None,
                       started: str | None = None, checks: RunChecks = RunChecks(),
                       spend: InvocationSpend | None = None) -> EvalOutcome:
    """Score ``outputs`` with ``scorer`` and write ``results.json`` and ``samples.jsonl`` to ``task_dir``."""
    mcfg = task.metrics
    samples = mcfg.bootstrap_samples if bootstrap_samples is None else bootstrap_samples
    seed = mcfg.bootstrap_seed if seed is None else seed
    metrics, rows = scorer.score(outputs, bootstrap_samples=samples, seed=seed, confidence=mcfg.confidence,
                                 failed_as_empty=checks.score_failed_as_empty)
    left_out = [r["id"] for r in rows if r.get("left_out")]  # the predictions file omits them: not failures
    failed = [r["id"] for r in rows if not r.get("left_out") and (outputs.get(r["id"]) is None or outputs[r["id"]].error)]
    counts = {"records_loaded": len(records), "excluded": 0, "left_out": len(left_out), "invalid_rows": 0, "scored": sum(r["scored"] for r in rows),
              "failed_outputs": len(failed), "empty_outputs": sum(1 for o in outputs.values() if o.text == ""),
              "truncated_outputs": 0, "unjudged": 0, "unparseable": 0, "off_label": 0}
    if spend is not None:
        spend.save()
    results: dict[str, Any] = {
        "harness": {"name": "privasis-bench", "version": __version__, "git_revision": git_revision()},
        "task": {"name": task.task, "version": task.version, "config_hash": task.config_hash(),
                 "source_file": file_ref(task.source_file)},
        "scorer": scorer.describe(),
        "dataset": {**portable_dataset(task), "limit": limit, "records_loaded": len(records), "invalid_rows": 0},
        "model": model_info,
        "instruction": instruction,
        "testee_prompt": describe_testee_prompt(task),
        "judge": None,
        "metrics": metrics,
        "counts": counts,
        "checks": checks.to_dict(),
        "answer_policy": {e.role: e.answers.to_dict() for e in engines},
        "failed_output_records": failed,
        "left_out_records": left_out,
        "notices": list(getattr(scorer, "notices", [])),
        "usage": spend.usage() if spend is not None else usage_delta(usage_before or {}, usage_by_role(engines)),
        "usage_cumulative": spend.save() if spend is not None else None,
        "timestamps": {"started": started or now(), "finished": now()},
    }
    results["complete"] = not failed or checks.score_failed_as_empty
    results["checks"]["passed"] = results["complete"]
    write_samples(task_dir / SAMPLES_NAME, rows)
    write_results(task_dir / RESULTS_NAME, results)
    return EvalOutcome(task_dir, results)
