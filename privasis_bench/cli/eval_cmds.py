"""``run``, ``evaluate``/``judge``, ``rescore`` and ``compare``: judging and scoring from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.cache import CACHE_FILE_NAME, ResponseCache, default_cache_dir
from privasis_bench.cli.options import (DATA_OPTIONS, ENGINE_OPTIONS, JUDGE_OPTIONS, SCORING_OPTIONS, Opts, TasksOption,
                                        split_multi, with_options)
from privasis_bench.data.loading import load_records, with_data_files
from privasis_bench.engine.executor import Engine, usage_by_role
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.errors import PrivasisError
from privasis_bench.results.files import atomic_write_text, dumps_json
from privasis_bench.results.tables import compare_table, summary_table
from privasis_bench.pipeline.run import SANITIZED_NAME, EngineOptions, EvalOutcome, evaluate_task, model_description, now
from privasis_bench.pipeline.judging import resolve_judge
from privasis_bench.results.compare import compare_runs
from privasis_bench.results.rescore import rescore_run
from privasis_bench.tasks.registry import resolve_tasks

console = Console()

OutputOpt = typer.Option(..., "--output", "-o", help="Run directory; each task writes <dir>/<task>/{results.json,samples.jsonl}.")
SeedOpt = SCORING_OPTIONS["seed"][1]

def _check_choice(name: str, value: Optional[str], allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise PrivasisError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


class _Session:
    """Engines and cache shared by the tasks of one command, closed at the end."""

    def __init__(self, opts: Opts, rpm: Optional[float] = None) -> None:
        self.cache = None if opts.no_cache else ResponseCache((opts.cache_dir or default_cache_dir()) / CACHE_FILE_NAME)
        self.options = EngineOptions(cache=self.cache, retry=RetryPolicy(max_attempts=opts.max_attempts),
                                     concurrency=opts.concurrency, judge_concurrency=opts.judge_concurrency,
                                     progress=opts.progress, rpm=rpm, judge_rpm=opts.judge_rpm)
        self.engines: dict[tuple[str, str], Engine] = {}

    def engine(self, spec: ModelSpec | None, role: str) -> Engine | None:
        if spec is None:
            return None
        key = (role, spec.key())
        if key not in self.engines:
            self.engines[key] = self.options.engine(spec, role)
        return self.engines[key]

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()
        if self.cache is not None:
            self.cache.close()


def _finish(outcomes: list[EvalOutcome]) -> None:
    if outcomes:
        console.print(summary_table([o.results for o in outcomes]))
    for o in outcomes:
        console.print(f"  -> {escape(str(o.task_dir))}", highlight=False)
        c = o.results["counts"]
        if c["failed_outputs"]:
            console.print(f"[yellow]{o.results['task']['name']}: {c['failed_outputs']} model output(s) failed and were scored "
                          "as empty outputs (see failed_output_records); a re-run retries them[/]", highlight=False)
        if c["unparseable"]:
            console.print(f"[yellow]{o.results['task']['name']}: {c['unparseable']} record(s) with unparseable strict answers "
                          "left out of the metrics (see unparseable_records)[/]", highlight=False)
    bad = [o for o in outcomes if not o.ok]
    if bad:
        n = sum(o.results["counts"]["unjudged"] for o in bad)
        console.print(f"[red]{n} record(s) left unjudged (judge calls failed)[/]; re-run the same command to judge only those.",
                      highlight=False)
        raise typer.Exit(1)


def _task_setup(task_name: Any, opts: Opts) -> tuple[Any, Any, Any, str]:
    """Per task: apply --data-files, resolve the judge, load the records, pick the instruction variant."""
    task = with_data_files(task_name, split_multi(opts.data_files)) if opts.data_files else task_name
    choice = resolve_judge(task, opts.judge, opts.judge_args, prompts_dir=opts.judge_prompts, parse_mode=opts.parse_mode,
                           guess_max_tokens=opts.judge_guess_max_tokens, compare_max_tokens=opts.judge_compare_max_tokens)
    loaded = load_records(task, skip_invalid=opts.skip_invalid, limit=opts.limit)
    return task, choice, loaded, opts.instruction or task.prompt.instruction


def _check_opts(opts: Opts) -> None:
    _check_choice("--instruction", opts.instruction, ("base", "smoothed"))
    _check_choice("--parse-mode", opts.parse_mode, ("official", "strict"))


@with_options(DATA_OPTIONS, JUDGE_OPTIONS, ENGINE_OPTIONS, SCORING_OPTIONS)
def run(
    model: str = typer.Option(..., "--model", "-m", help="Model under test: provider:model[,k=v...]."),
    model_args: Optional[str] = typer.Option(None, "--model-args", help="Extra model arguments k=v,k2=v2."),
    tasks: List[str] = TasksOption,
    output: Path = OutputOpt,
    rpm: Optional[float] = typer.Option(None, "--rpm", min=0.001, help="At most this many model requests per minute."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, help="Model output budget (default: the task's)."),
    temperature: Optional[float] = typer.Option(None, "--temperature", min=0.0, help="Model temperature (default: the task's)."),
    opts: Opts = None,  # type: ignore[assignment]  # filled by with_options
) -> None:
    """Sanitize with the model, judge, score and write results; re-running resumes what is missing."""
    from privasis_bench.pipeline.sanitize import run_sanitize

    _check_opts(opts)
    spec = ModelSpec.parse(model, model_args)
    task_list = resolve_tasks(split_multi(tasks), opts.include_path)
    session = _Session(opts, rpm=rpm)
    outcomes: list[EvalOutcome] = []
    try:
        model_engine = session.engine(spec, "model")
        for task in task_list:
            started = now()
            before = usage_by_role(session.engines.values())
            task, choice, loaded, variant = _task_setup(task, opts)
            mt = max_tokens or task.generation.max_tokens
            temp = task.generation.temperature if temperature is None else temperature
            task_dir = output / task.task
            outs = run_sanitize(loaded.scored, task, model_engine, task_dir / SANITIZED_NAME,
                                instruction=variant, max_tokens=mt, temperature=temp)
            judge_engine = session.engine(choice.spec, "judge")
            engines = list(session.engines.values())  # usage is reported as the delta over this task
            outcomes.append(evaluate_task(
                task, loaded, {o.id: o for o in outs}, choice, judge_engine, task_dir,
                model_info=model_description(spec, model_engine, max_tokens=mt, temperature=temp),
                instruction=variant, engines=engines, usage_before=before, limit=opts.limit,
                bootstrap_samples=opts.bootstrap_samples, seed=opts.seed, started=started,
            ))
    finally:
        session.close()
    _finish(outcomes)


@with_options(DATA_OPTIONS, JUDGE_OPTIONS, ENGINE_OPTIONS, SCORING_OPTIONS)
def evaluate(
    predictions: Path = typer.Option(..., "--predictions", "-p", help="Saved outputs: our sanitized JSONL, lm-eval samples or {id, model_sanitized_text} JSONL."),
    tasks: List[str] = TasksOption,
    output: Path = OutputOpt,
    prediction_format: str = typer.Option("auto", "--format", help="auto, sanitized, lmeval or reference."),
    model_label: Optional[str] = typer.Option(None, "--model-label", help="Name of the model that produced the predictions."),
    opts: Opts = None,  # type: ignore[assignment]  # filled by with_options
) -> None:
    """Judge and score saved model outputs (no call to the model under test)."""
    from privasis_bench.pipeline.predictions import load_predictions

    _check_opts(opts)
    task_list = resolve_tasks(split_multi(tasks), opts.include_path)
    if len(task_list) != 1:
        raise PrivasisError(f"--predictions belongs to one task; --tasks names {len(task_list)}")
    session = _Session(opts)
    try:
        started = now()
        task, choice, loaded, variant = _task_setup(task_list[0], opts)
        preds = load_predictions(predictions, loaded.scored, format=prediction_format, task=task,
                                 instruction=variant, model=model_label)
        models = sorted({o.model for o in preds.values() if o.model})
        label = model_label or (models[0] if len(models) == 1 else f"predictions:{predictions.name}")
        model_info: dict[str, Any] = {"label": label, "key": label, "spec": None, "rankable": None,
                                      "generation": None, "predictions": preds.report.to_dict()}
        judge_engine = session.engine(choice.spec, "judge")
        outcome = evaluate_task(
            task, loaded, dict(preds), choice, judge_engine, output / task.task, model_info=model_info,
            instruction=variant, engines=[judge_engine] if judge_engine else [], limit=opts.limit,
            bootstrap_samples=opts.bootstrap_samples, seed=opts.seed, started=started,
        )
    finally:
        session.close()
    _finish([outcome])


def rescore(
    run_dir: Path = typer.Argument(..., help="A run directory (or one task directory) written by run/evaluate."),
    bootstrap_samples: Optional[int] = SCORING_OPTIONS["bootstrap_samples"][1],
    seed: Optional[int] = SeedOpt,
    write: bool = typer.Option(False, "--write", help="Store the recomputed metrics in results.json."),
) -> None:
    """Recompute every metric from samples.jsonl (no model call), check it against results.json, and re-derive every verdict."""
    outcomes = rescore_run(run_dir, bootstrap_samples=bootstrap_samples, seed=seed, write=write)
    console.print(summary_table([o.results for o in outcomes]))
    mismatched = [o for o in outcomes if o.matches is False]
    for o in outcomes:
        status = "match" if o.matches else ("were recomputed with new settings, unlike" if o.matches is None else "DIFFER from")
        console.print(f"{escape(str(o.task_dir))}: recomputed metrics {status} results.json", highlight=False)
        for c in o.contradictions:
            console.print(f"  contradiction: {escape(str(c))}", highlight=False)
    if mismatched or any(o.contradictions for o in outcomes):
        raise typer.Exit(1)


def compare(
    a: Path = typer.Argument(..., help="First run directory (or task directory / results.json)."),
    b: Path = typer.Argument(..., help="Second run directory."),
    bootstrap_samples: Optional[int] = typer.Option(None, "--bootstrap-samples", min=1, help="Resamples (default: A's setting)."),
    seed: Optional[int] = SeedOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the comparison as JSON to this file."),
) -> None:
    """Paired bootstrap comparison of two runs on their common records, per common task."""
    comparisons = compare_runs(a, b, bootstrap_samples=bootstrap_samples, seed=seed)
    for name, comparison in comparisons:
        console.print(compare_table(name, comparison))
    if json_out is not None:
        payload = {"a": str(a), "b": str(b), "tasks": {name: c for name, c in comparisons}}
        atomic_write_text(json_out, dumps_json(payload))
        console.print(f"  -> {escape(str(json_out))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``run``, ``evaluate`` (alias ``judge``), ``rescore`` and ``compare``."""
    app.command("run")(run)
    app.command("evaluate")(evaluate)
    app.command("judge", help="Alias of evaluate: judge and score saved outputs.")(evaluate)
    app.command("rescore")(rescore)
    app.command("compare")(compare)
