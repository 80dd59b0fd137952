"""``run`` and ``evaluate`` for tasks scored by a span scorer (``scorer: tab``): no judge, the scorer's own metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from privasis_bench.cli.options import Opts, split_multi
from privasis_bench.data.loading import with_data_files
from privasis_bench.errors import PrivasisError
from privasis_bench.pipeline.lock import task_dir_lock, task_dir_read_lock
from privasis_bench.pipeline.run import SANITIZED_NAME, EvalOutcome, RunChecks, model_description, now
from privasis_bench.pipeline.scored import evaluate_span_task, model_outputs
from privasis_bench.pipeline.scorers import SpanScorer, span_scorer
from privasis_bench.tasks.scorers import DEFAULT_SCORER

console = Console()


def span_task(task: Any, opts: Opts) -> tuple[Any, SpanScorer | None]:
    """The task with ``--data-files`` applied, and its span scorer (None for the judge-based default)."""
    if task.scorer == DEFAULT_SCORER:
        return task, None
    for flag, value in (("--judge", opts.judge if opts.judge != "none" else None), ("--instruction", opts.instruction)):
        if value:
            raise PrivasisError(f"{flag} does not apply to task {task.task} (scorer {task.scorer}: no judge, one "
                                "instruction per document); drop it")
    task = with_data_files(task, split_multi(opts.data_files)) if opts.data_files else task
    if opts.prompt_template or opts.answer_cue:
        from privasis_bench.protocol.testee_prompt import with_testee_prompt

        task = with_testee_prompt(task, opts.prompt_template, opts.answer_cue)
    scorer = span_scorer(task)
    if scorer is not None and not task.dataset.data_files:  # found through the scorer's data folder: record which file
        task = with_data_files(task, scorer.data_files())
        scorer = span_scorer(task)
    return task, scorer


def refuse_span_task(task: Any, command: str) -> None:
    """One clear line when ``command`` (judge-protocol only) is given a task of a span scorer."""
    if task.scorer != DEFAULT_SCORER:
        raise PrivasisError(f"{command} does not take task {task.task} (scored by {task.scorer}); use `run` (its "
                            "outputs are kept in <output>/<task>/sanitized.jsonl) or `evaluate --predictions`")


def run_span_task(task: Any, scorer: SpanScorer, opts: Opts, session: Any, spec: Any, engine: Any, output: Path, *,
                  max_tokens: int | None, temperature: float | None, checks: RunChecks) -> EvalOutcome:
    """Sanitize every document with the model (resumable journal), then score with the task's span scorer."""
    started = now()
    records = scorer.records(limit=opts.limit)
    mt = max_tokens or task.generation.max_tokens
    temp = task.generation.temperature if temperature is None else temperature
    task_dir = output / task.task
    with task_dir_lock(task_dir, "run"), session.spend(task_dir, "run") as spend:
        from privasis_bench.pipeline.sanitize import OutputJournal

        journal = OutputJournal(task, engine, task_dir / SANITIZED_NAME, instruction="base", max_tokens=mt,
                                temperature=temp)
        try:
            outputs = model_outputs(records, journal, engine, f"sanitize {task.task}")
        finally:
            journal.close()
        return evaluate_span_task(task, scorer, outputs, task_dir, records=records,
                                  model_info=model_description(spec, engine, max_tokens=mt, temperature=temp),
                                  instruction="base", engines=list(session.engines.values()), limit=opts.limit,
                                  bootstrap_samples=opts.bootstrap_samples, seed=opts.seed, started=started,
                                  checks=checks, spend=spend)


def evaluate_span_predictions(task: Any, scorer: SpanScorer, predictions: Path, opts: Opts, session: Any,
                              output: Path, *, model_label: str | None, checks: RunChecks) -> EvalOutcome:
    """Score a predictions file in the scorer's own format (TAB: ``{doc_id: [[start, end], ...]}``)."""
    started = now()
    records = scorer.records(limit=opts.limit)
    with task_dir_read_lock(predictions.parent, "evaluate", create=False):  # a run's own files: not while it writes
        outputs = scorer.read_predictions(str(predictions))
    label = model_label or f"predictions:{predictions.name}"
    model_info = {"label": label, "key": label, "spec": None, "rankable": None, "generation": None,
                  "predictions": {"path": predictions.name,
                                  "format": getattr(scorer, "predictions_format", f"{scorer.name}-masked-spans"),
                                  "documents": len(outputs)}}
    task_dir = output / task.task
    with task_dir_lock(task_dir, "evaluate"), session.spend(task_dir, "evaluate") as spend:
        return evaluate_span_task(task, scorer, outputs, task_dir, records=records, model_info=model_info,
                                  instruction="base", limit=opts.limit, bootstrap_samples=opts.bootstrap_samples,
                                  seed=opts.seed, started=started, checks=checks, spend=spend)


def print_span_results(outcomes: list[EvalOutcome]) -> None:
    """One table per span-scored outcome: each measure with its bootstrap interval."""
    from rich.table import Table

    for o in outcomes:
        res, metrics = o.results, o.results["metrics"]
        table = Table(title=f"{res['task']['name']} ({res['scorer']['name']} scorer, 95% bootstrap CI) — "
                            f"model: {res['model']['label']}", title_justify="left")
        table.add_column("measure", no_wrap=True)
        table.add_column("value", justify="right")
        for key, value in metrics.items():
            if isinstance(value, float):
                ci = metrics.get("ci", {}).get(key)
                band = f" [{ci['low']:.3f}, {ci['high']:.3f}]" if ci else ""
                table.add_row(key, f"{value:.3f}{band}")
        for etype, value in metrics.get("token_recall_by_type", {}).items():
            table.add_row(f"token_recall {etype}", f"{value:.3f}")
        for key, value in metrics.items():
            if value is None and key in metrics.get("official_rounded", {}):
                table.add_row(key, "nothing to count")
        table.add_row("scored documents", str(metrics.get("scored_documents")))
        if res["counts"].get("left_out"):
            table.add_row("left out (not in the predictions file)", str(res["counts"]["left_out"]))
        table.add_row("failed outputs", str(res["counts"]["failed_outputs"]))
        console.print(table)
        for line in res.get("notices") or []:
            console.print(f"[yellow]{escape(res['task']['name'])}: {escape(line)}[/]", highlight=False, soft_wrap=True)
