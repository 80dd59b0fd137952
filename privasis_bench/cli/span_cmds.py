"""The per-task pieces ``run``, ``evaluate`` and ``sanitize`` take from a task's family when its scorer scores finished
outputs (``scorer: tab``, a plug-in family ...): the task as given with its scorer, the scorer's predictions format,
and its results table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from privasis_bench.cli.options import Opts, split_multi
from privasis_bench.data.loading import with_data_files
from privasis_bench.errors import PrivasisError
from privasis_bench.pipeline.lock import task_dir_read_lock
from privasis_bench.pipeline.scorers import family_of, own_records, span_scorer

console = Console()


def span_task(task: Any, opts: Opts) -> tuple[Any, Any]:
    """The task with ``--data-files`` applied, and its scorer when it reads its own documents (else None: the task's
    rows are loaded by the command)."""
    if not own_records(task):
        return task, None
    judge = getattr(opts, "judge", None)
    judge = judge if judge != "none" and "judge" not in family_of(task).roles else None
    for flag, value in (("--judge", judge), ("--instruction", opts.instruction)):
        if value:
            raise PrivasisError(f"{flag} does not apply to task {task.task} (scorer {task.scorer}: no judge, one "
                                "instruction per document); drop it")
    task = with_data_files(task, split_multi(opts.data_files)) if getattr(opts, "data_files", None) else task
    if getattr(opts, "prompt_template", None) or getattr(opts, "answer_cue", None):
        from privasis_bench.protocol.testee_prompt import with_testee_prompt

        task = with_testee_prompt(task, opts.prompt_template, opts.answer_cue)
    scorer = span_scorer(task)
    if scorer is not None and not task.dataset.data_files:  # found through the scorer's data folder: record which file
        task = with_data_files(task, scorer.data_files())
        scorer = span_scorer(task)
    return task, scorer


def scorer_predictions(scorer: Any, predictions: Path, model_label: str | None) -> tuple[Any, Any, frozenset[str]]:
    """A predictions file in the scorer's own format (TAB: ``{doc_id: [[start, end], ...]}``): outputs, the model
    section of the results, and no record left out here (the scorer marks what the file omits in its rows)."""
    with task_dir_read_lock(predictions.parent, "evaluate", create=False):  # a run's own files: not while it writes
        outputs = scorer.read_predictions(str(predictions))
    label = model_label or f"predictions:{predictions.name}"
    model_info = {"label": label, "key": label, "spec": None, "rankable": None, "generation": None,
                  "predictions": {"path": predictions.name,
                                  "format": getattr(scorer, "predictions_format", f"{scorer.name}-masked-spans"),
                                  "documents": len(outputs)}}
    return outputs, model_info, frozenset()


def print_span_results(results: list[dict[str, Any]]) -> None:
    """The default family report: one table per task's results, each measure with its bootstrap interval."""
    from rich.table import Table

    for res in results:
        metrics = res["metrics"]
        table = Table(title=f"{res['task']['name']} ({res['scorer']['name']} scorer, 95% bootstrap CI) — "
                            f"model: {res['model']['label']}", title_justify="left")
        table.add_column("measure", no_wrap=True)
        table.add_column("value", justify="right")
        for key, value in metrics.items():
            if isinstance(value, float):
                ci = metrics.get("ci", {}).get(key)
                bounded = isinstance(ci, dict) and None not in (ci.get("low"), ci.get("high"))  # none without bootstrap
                band = f" [{ci['low']:.3f}, {ci['high']:.3f}]" if bounded else ""
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
