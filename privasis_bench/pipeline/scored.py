"""The runner's step for a scorer of finished outputs (``scorer: tab``, ``tab_replacement``, a plug-in family ...).

The model under test is asked exactly as for the Privasis tasks (the task's prompt template, the record's
instruction, the output journal ``sanitized.jsonl`` that makes the run resumable, the response cache); saved
predictions in the scorer's own format can stand in for the model. The scorer then computes its metrics from the
outputs (and the spans masking systems report), asking the roles its family declares (``roles=``). Its name and
settings are recorded under ``scorer`` in the results, which :func:`privasis_bench.pipeline.run.evaluate_task`
writes.
"""

from __future__ import annotations

from typing import Any, Sequence

from privasis_bench.data.system_output import SystemOutput
from privasis_bench.engine.executor import Engine
from privasis_bench.pipeline.job import TaskJob
from privasis_bench.pipeline.sanitize import OutputJournal, SanitizedOutput
from privasis_bench.results.files import SAMPLES_NAME, write_samples
from privasis_bench.tasks.family import FAMILIES


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


def scored_sections(job: TaskJob) -> tuple[dict[str, Any], dict[str, Any], bool, bool, Any]:
    """Score the finished outputs with the job's scorer (asking its family's roles) and write ``samples.jsonl``;
    the family's sections of the results, the dataset facts, complete, passed, and how the ledger is finished."""
    task, scorer, plan, records, checks = job.task, job.scorer, job.plan, job.records, job.checks
    if plan.journal is not None:
        try:
            outputs = model_outputs(records, plan.journal, plan.model_engine, f"sanitize {task.task}")
        finally:
            plan.journal.close()
    else:
        outputs = dict(plan.given or {})
    samples, seed = job.bootstrap()
    asks = {"roles": dict(job.roles)} if FAMILIES.get(task.scorer).roles else {}
    metrics, rows = scorer.score(outputs, bootstrap_samples=samples, seed=seed, confidence=task.metrics.confidence,
                                 failed_as_empty=checks.score_failed_as_empty, **asks)
    left_out = [r["id"] for r in rows if r.get("left_out")]  # the predictions file omits them: not failures
    failed = [r["id"] for r in rows if not r.get("left_out") and (outputs.get(r["id"]) is None or outputs[r["id"]].error)]
    counts = {"records_loaded": len(records), "excluded": 0, "left_out": len(left_out), "invalid_rows": 0,
              "scored": sum(r["scored"] for r in rows), "failed_outputs": len(failed),
              "empty_outputs": sum(1 for o in outputs.values() if o.text == ""), "truncated_outputs": 0,
              "unjudged": 0, "unparseable": 0, "off_label": 0}
    if job.spend is not None:
        job.spend.save()
    family = {"scorer": scorer.describe(), "judge": None, "metrics": metrics, "counts": counts,
              "failed_output_records": failed, "left_out_records": left_out,
              "notices": list(getattr(scorer, "notices", []))}
    complete = not failed or checks.score_failed_as_empty
    write_samples(job.task_dir / SAMPLES_NAME, rows)
    dataset = {"limit": job.limit, "records_loaded": len(records), "invalid_rows": 0}
    return family, dataset, complete, complete, lambda spend: spend.save()
