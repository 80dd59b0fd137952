"""``run``, ``evaluate``/``judge``, ``rescore`` and ``compare``: judging and scoring from the command line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ContextManager, List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.cli.batch_options import BATCH_OPTIONS, batch_options
from privasis_bench.cli.executor_options import EXECUTOR_OPTIONS, ray_options
from privasis_bench.cli.options import (
    CHECK_OPTIONS,
    DATA_OPTIONS,
    ENGINE_OPTIONS,
    JUDGE_OPTIONS,
    SCORING_OPTIONS,
    TESTEE_OPTIONS,
    Opts,
    TasksOption,
    answer_policy,
    retry_policy,
    split_multi,
    tolerated_by_task,
    with_options,
)
from privasis_bench.cli.outcome_report import finish as _finish
from privasis_bench.cli.outcome_report import print_profile
from privasis_bench.cli.plan_cmd import PLAN_OPTIONS, show_plan, wants_plan
from privasis_bench.cli.preset import PRESET_OPTIONS, apply_preset, preset_judge_settings, refuse_unreproducible
from privasis_bench.cli.roles import role_specs, task_roles
from privasis_bench.cli.span_cmds import scorer_predictions, span_task
from privasis_bench.cli.value_checks import check_finite, check_input_path, check_label
from privasis_bench.data.loading import load_records, with_data_files
from privasis_bench.engine.cache import open_response_cache
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.stats import fault_summary
from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir
from privasis_bench.pipeline.lock import task_dir_lock, task_dir_read_lock
from privasis_bench.pipeline.run import (
    SANITIZED_NAME,
    EngineOptions,
    EvalOutcome,
    OutputPlan,
    RunChecks,
    TaskJob,
    evaluate_task,
    model_description,
    now,
)
from privasis_bench.pipeline.scorers import family_of
from privasis_bench.pipeline.spend import InvocationSpend, recorded_spend
from privasis_bench.protocol.judging import resolve_judge, spec_label
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
        self.cache = open_response_cache(opts.cache_dir, opts.no_cache)
        self.options = EngineOptions(cache=self.cache, retry=retry_policy(opts), concurrency=opts.concurrency,
                                     judge_concurrency=opts.judge_concurrency, progress=opts.progress, rpm=rpm,
                                     judge_rpm=opts.judge_rpm, answers=answer_policy(opts, "model"),
                                     judge_answers=answer_policy(opts, "judge"))
        self.engines: dict[tuple[str, str], Engine] = {}
        self.batch = batch_options(opts)  # --batch: provider batch APIs (privasis_bench.engine.batching)
        self.brokers: dict[tuple[str, str], Any] = {}

    def engine(self, spec: ModelSpec | None, role: str) -> Engine | None:
        if spec is None:
            return None
        key = (role, spec.key())
        if key not in self.engines:
            self.engines[key] = self.options.engine(spec, role)
            # --- provider batch hook: --batch model/judge (engine/batching.py) ---
            from privasis_bench.engine.batching import attach_batching

            self.brokers[key] = attach_batching(self.engines[key], self.batch)
        return self.engines[key]

    def spend(self, task_dir: Path, command: str) -> ContextManager[InvocationSpend]:
        """Measure what this command pays in ``task_dir``; recorded in its ledger however the block ends."""
        return recorded_spend(task_dir, command, lambda: list(self.engines.values()))

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()
        if self.cache is not None:
            self.cache.close()
        for engine in self.engines.values():  # a degrading server is summarised: retries, faults by kind
            line = fault_summary(engine.role, spec_label(engine.spec), engine.stats)
            if line:
                console.print(f"[yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)


def _say_killed(spend: InvocationSpend) -> None:
    for line in spend.killed_lines():
        console.print(f"[yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)


def _task_setup(task_name: Any, opts: Opts) -> tuple[Any, Any, Any, str]:
    """Per task: apply --data-files, resolve the judge, load the records, pick the instruction variant."""
    from privasis_bench.protocol.testee_prompt import with_testee_prompt

    task = with_data_files(task_name, split_multi(opts.data_files)) if opts.data_files else task_name
    task = with_testee_prompt(task, opts.prompt_template, opts.answer_cue)
    choice = resolve_judge(task, opts.judge, opts.judge_args, prompts_dir=opts.judge_prompts, parse_mode=opts.parse_mode,
                           guess_max_tokens=opts.judge_guess_max_tokens, compare_max_tokens=opts.judge_compare_max_tokens,
                           empty_outputs=opts.empty_outputs, inclusion_text=opts.inclusion_text)
    choice = preset_judge_settings(choice, opts)
    loaded = load_records(task, skip_invalid=opts.skip_invalid, limit=opts.limit, stream=True).require(task.task)
    for bad in loaded.invalid:  # --skip-invalid: every skipped row is named, not only counted
        console.print(f"[yellow]{escape(task.task)}: skipped invalid row {bad.row_number} (record {escape(bad.record_id)}): "
                      f"{escape(bad.field)}: {escape(bad.message)}[/]", highlight=False, soft_wrap=True)
    return task, choice, loaded, opts.instruction or task.prompt.instruction


def _family_setup(task: Any, opts: Opts) -> tuple[Any, Any, Any, Any, str]:
    """Per task, whatever its family: the task as given, its scorer, its records, the judge settings resolved from the
    task (None for a scorer that reads its own documents) and the instruction variant."""
    task, scorer = span_task(task, opts)
    if scorer is not None:  # the scorer's own documents, one instruction each
        return task, scorer, scorer.records(limit=opts.limit), None, "base"
    task, choice, loaded, variant = _task_setup(task, opts)
    return task, family_of(task).load("scorer")(task), loaded, choice, variant


def _checks(opts: Opts, task: Any) -> RunChecks:
    tolerated = tolerated_by_task(opts, task)
    limit = opts.max_off_label if opts.max_off_label is not None else tolerated.get("max_off_label", 0)
    return RunChecks(score_failed_as_empty=opts.score_failed_as_empty, max_off_label=limit, tolerated_by_task=tolerated)


def _task_policies(opts: Opts, task: Any, *engines: Engine | None) -> None:
    """Give each engine the answer policy for ``task`` (command-line options win over the task's answer_policy)."""
    for engine in engines:
        if engine is not None and engine.adapter.cacheable:  # a deterministic baseline keeps accepting everything
            engine.answers = answer_policy(opts, engine.role, task=task)


def _check_opts(opts: Opts) -> None:
    _check_choice("--instruction", opts.instruction, ("base", "smoothed"))
    _check_choice("--parse-mode", opts.parse_mode, ("official", "strict"))


@with_options(DATA_OPTIONS, TESTEE_OPTIONS, JUDGE_OPTIONS, PRESET_OPTIONS, ENGINE_OPTIONS, SCORING_OPTIONS, CHECK_OPTIONS,
              EXECUTOR_OPTIONS, BATCH_OPTIONS, PLAN_OPTIONS)
def run(
    model: str = typer.Option(..., "--model", "-m", help="Model under test: provider:model[,k=v...]."),
    model_args: Optional[str] = typer.Option(None, "--model-args", help="Extra model arguments k=v,k2=v2."),
    tasks: List[str] = TasksOption,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Run directory; each task writes <dir>/<task>/{results.json,samples.jsonl} (with --plan: optional, read for what is already answered)."),
    rpm: Optional[float] = typer.Option(None, "--rpm", min=0.1, max=1_000_000.0, help="At most this many model requests per minute (0.1 to 1,000,000; a wait of 10 s or more is told in one line)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, max=1_000_000, help="Model output budget (default: the task's)."),
    temperature: Optional[float] = typer.Option(None, "--temperature", min=0.0, help="Model temperature (default: the task's)."),
    profile: bool = typer.Option(False, "--profile", help="At the end, print where the time went: waiting on the model, on the judge, and this process's CPU."),
    opts: Opts = None,  # type: ignore[assignment]  # filled by with_options
) -> None:
    """Sanitize with the model, judge, score and write results; re-running resumes what is missing."""
    from privasis_bench.pipeline.sanitize import OutputJournal

    clock = (time.perf_counter(), time.process_time())
    max_tokens, temperature = apply_preset(opts, max_tokens=max_tokens, temperature=temperature)
    _check_opts(opts)
    check_finite("--temperature", temperature)
    ray_opts = ray_options(opts)
    spec = ModelSpec.parse(model, model_args)
    task_list = resolve_tasks(split_multi(tasks), opts.include_path)
    given = role_specs(opts, task_list)
    if wants_plan(opts):  # --plan: counts and costs, no call, nothing written
        show_plan(opts, spec, task_list, output, max_tokens=max_tokens, temperature=temperature, setup=_task_setup,
                  roles=given)
        return
    if output is None:
        raise PrivasisError("run needs -o/--output, the run directory results are written to (only --plan runs without it)")
    if ray_opts is not None and opts.batch:
        raise PrivasisError("--batch runs with the local executor only; drop --executor ray or --batch")
    batch_options(opts)  # --batch values checked before anything is written
    for task in task_list:  # a span scorer's bad settings (scorer_args) are said before anything is written
        span_task(task, opts)
    session = _Session(opts, rpm=rpm)
    outcomes: list[EvalOutcome] = []
    try:
        model_engine = session.engine(spec, "model")  # a bad model argument is said before anything is written
        ensure_dir(output, "--output")
        for task in task_list:
            started = now()
            task, scorer, records, choice, variant = _family_setup(task, opts)
            mt = max_tokens or task.generation.max_tokens
            temp = task.generation.temperature if temperature is None else temperature
            task_dir = output / task.task
            roles = task_roles(task, opts, session, given, choice)  # a role without batches (--batch ROLE) is said
            with task_dir_lock(task_dir, "run"), session.spend(task_dir, "run") as spend:  # before a ledger is written
                _say_killed(spend)
                _task_policies(opts, task, model_engine, *roles.values())
                if ray_opts is not None:  # --executor ray: fills the files below; the local pass then reuses them
                    _distributed(task, records if scorer.own_records else records.scored, choice, task_dir, ray_opts, session,
                                 model=(spec, model_engine), judge_engine=roles.get("judge"), instruction=variant,
                                 max_tokens=mt, temperature=temp)
                journal = OutputJournal(task, model_engine, task_dir / SANITIZED_NAME, instruction=variant,
                                        max_tokens=mt, temperature=temp)
                outcomes.append(evaluate_task(TaskJob(
                    task, scorer, records, OutputPlan(model_engine, journal), task_dir, choice=choice, roles=roles,
                    model_info=model_description(spec, model_engine, max_tokens=mt, temperature=temp),
                    instruction=variant, engines=list(session.engines.values()), limit=opts.limit,
                    bootstrap_samples=opts.bootstrap_samples, seed=opts.seed, started=started, checks=_checks(opts, task),
                    spend=spend, preset=opts.preset)))
    finally:
        if profile:
            print_profile(clock, list(session.engines.values()))
        session.close()
    _finish(outcomes)


@with_options(DATA_OPTIONS, TESTEE_OPTIONS, JUDGE_OPTIONS, PRESET_OPTIONS, ENGINE_OPTIONS, SCORING_OPTIONS, CHECK_OPTIONS,
              EXECUTOR_OPTIONS, BATCH_OPTIONS)
def evaluate(
    predictions: Path = typer.Option(..., "--predictions", "-p", help="Saved outputs: our sanitized JSONL, lm-eval samples, an inspect_ai log (.eval or .json) or {id, model_sanitized_text} JSONL."),
    tasks: List[str] = TasksOption,
    output: Path = OutputOpt,
    prediction_format: str = typer.Option("auto", "--predictions-format", "--format", help="auto (detected), sanitized, lmeval, inspect or reference."),
    model_label: Optional[str] = typer.Option(None, "--model-label", help="Name of the model that produced the predictions."),
    postprocess: str = typer.Option(
        "auto", "--predictions-postprocess",
        help="auto (default: reference-format text judged verbatim, raw lm-eval and inspect answers cleaned), none (judge the "
             "stored text verbatim) or testee (apply the testee post-processing); recorded in results."),
    score_missing_as_empty: bool = typer.Option(
        False, "--score-missing-as-empty",
        help="Score records the predictions file has no line for as empty outputs (marked in results); by default they "
             "are left out of the scores and the results are marked incomplete."),
    opts: Opts = None,  # type: ignore[assignment]  # filled by with_options
) -> None:
    """Judge and score saved model outputs (no call to the model under test)."""
    apply_preset(opts)
    _check_opts(opts)
    if opts.preset is not None and postprocess == "testee":
        raise PrivasisError(f"--predictions-postprocess testee contradicts --preset {opts.preset}: the paper's evaluator "
                            "judges saved predictions as they are; drop one of them (auto or none)")
    check_label("--model-label", model_label)
    ray_opts = ray_options(opts)
    if ray_opts is not None and opts.batch:
        raise PrivasisError("--batch runs with the local executor only; drop --executor ray or --batch")
    batch_options(opts, command="evaluate", lacks="model")
    task_list = resolve_tasks(split_multi(tasks), opts.include_path)
    if len(task_list) != 1:
        raise PrivasisError(f"--predictions belongs to one task; --tasks names {len(task_list)}")
    roles_given = role_specs(opts, task_list)
    ensure_dir(output, "--output")
    session = _Session(opts)
    try:
        started = now()
        check_input_path("--predictions", predictions)  # said before the scorer loads its estimators
        task, scorer, records, choice, variant = _family_setup(task_list[0], opts)
        if scorer.own_records:  # the scorer's own predictions format (TAB: {doc_id: [[start, end], ...]})
            given, model_info, left_out = scorer_predictions(scorer, predictions, model_label)
        else:
            given, model_info, left_out = _judged_predictions(
                predictions, records, task, variant, opts, format=prediction_format, model_label=model_label,
                postprocess=postprocess, missing_as_empty=score_missing_as_empty)
        roles = task_roles(task, opts, session, roles_given, choice)
        _task_policies(opts, task, *roles.values())
        task_dir = output / task.task
        with task_dir_lock(task_dir, "evaluate"), session.spend(task_dir, "evaluate") as spend:
            _say_killed(spend)
            if ray_opts is not None and not scorer.own_records:  # --executor ray: fills judged.jsonl; the local pass
                _distributed(task, records.scored, choice, task_dir, ray_opts, session, outputs=given,  # reuses it
                             judge_engine=roles.get("judge"))
            outcome = evaluate_task(TaskJob(
                task, scorer, records, OutputPlan(given=given, left_out=left_out), task_dir, choice=choice,
                roles=roles, model_info=model_info, instruction=variant, engines=list(roles.values()),
                limit=opts.limit, bootstrap_samples=opts.bootstrap_samples, seed=opts.seed, started=started,
                checks=_checks(opts, task), spend=spend, preset=opts.preset))
    finally:
        session.close()
    _finish([outcome])


def _judged_predictions(predictions: Path, loaded: Any, task: Any, variant: str, opts: Opts, *, format: str,
                        model_label: Optional[str], postprocess: str, missing_as_empty: bool) -> tuple[Any, Any, Any]:
    """Saved outputs of the task's dataset rows (our formats, lm-eval, inspect): outputs, model section, the records
    left out (no prediction)."""
    from privasis_bench.pipeline.predictions import load_predictions

    with task_dir_read_lock(predictions.parent, "evaluate", create=False):  # not while a run writes them
        preds = load_predictions(predictions, loaded.scored, format=format, task=task, instruction=variant,
                                 model=model_label, excluded={r.id: r.excluded_reason or "excluded" for r in loaded.excluded},
                                 postprocess=postprocess, missing="empty" if missing_as_empty else "leave_out",
                                 null_as_empty=opts.preset is not None)
    if opts.preset is not None:
        refuse_unreproducible(preds, opts.preset, predictions)
    models = sorted({o.model for o in preds.values() if o.model})
    label = model_label or (models[0] if len(models) == 1 else f"predictions:{predictions.name}")
    model_info = {"label": label, "key": label, "spec": None, "rankable": None, "generation": None,
                  "predictions": preds.report.to_dict()}
    return dict(preds), model_info, frozenset() if missing_as_empty else frozenset(preds.report.missing)


def _distributed(task: Any, records: Any, choice: Any, task_dir: Path, ray_opts: Any, session: _Session, **kw: Any) -> None:
    """The Ray executor's pass over one task (privasis_bench.distributed), imported only when asked for."""
    from privasis_bench.distributed.evaluation import distributed_evaluation

    distributed_evaluation(task, records, choice, task_dir, ray=ray_opts, options=session.options, **kw)


def register(app: typer.Typer) -> None:
    """Add ``run`` and ``evaluate`` (alias ``judge``)."""
    app.command("run")(run)
    app.command("evaluate")(evaluate)
    app.command("judge", help="Alias of evaluate: judge and score saved outputs.")(evaluate)
