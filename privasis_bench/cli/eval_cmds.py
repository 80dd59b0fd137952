"""``run``, ``evaluate``/``judge``, ``rescore`` and ``compare``: judging and scoring from the command line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, ContextManager, List, Optional

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
from privasis_bench.cli.preset import PRESET_OPTIONS, apply_preset, refuse_unreproducible
from privasis_bench.cli.roles import role_specs, task_roles
from privasis_bench.cli.value_checks import check_choice, check_finite, check_input_path, check_label
from privasis_bench.data.records import INSTRUCTION_VARIANTS
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
from privasis_bench.pipeline.scorers import setup_task
from privasis_bench.pipeline.spend import InvocationSpend, recorded_spend
from privasis_bench.protocol.judge_prompts import PARSE_MODES
from privasis_bench.protocol.judging import spec_label
from privasis_bench.tasks.registry import resolve_tasks

console = Console()

OutputOpt = typer.Option(..., "--output", "-o", help="Run directory; each task writes <dir>/<task>/{results.json,samples.jsonl}.")
SeedOpt = SCORING_OPTIONS["seed"][1]

class Session:
    """Engines and cache shared by the tasks of one command (``run``, ``evaluate``, ``sanitize``), closed at the end.

    ``batch``: the command's --batch settings (default: read from ``opts``); a command without judge options
    (``sanitize``) builds model engines only."""

    def __init__(self, opts: Opts, rpm: Optional[float] = None, batch: Any = None) -> None:
        self.cache = open_response_cache(opts.cache_dir, opts.no_cache)
        judged = hasattr(opts, "judge")
        self.options = EngineOptions(cache=self.cache, retry=retry_policy(opts), concurrency=opts.concurrency,
                                     judge_concurrency=opts.judge_concurrency if judged else None, progress=opts.progress,
                                     rpm=rpm, judge_rpm=opts.judge_rpm if judged else None,
                                     answers=answer_policy(opts, "model"))
        if judged:
            self.options.judge_answers = answer_policy(opts, "judge")
        self.engines: dict[tuple[str, str], Engine] = {}
        self.batch = batch or batch_options(opts)  # --batch: provider batch APIs (privasis_bench.engine.batching)
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


def say_killed(spend: InvocationSpend) -> None:
    """Say what the spend ledger found of earlier invocations that were killed."""
    for line in spend.killed_lines():
        console.print(f"[yellow]{escape(line)}[/]", highlight=False, soft_wrap=True)


def _setup(task: Any, opts: Opts, **how: Any) -> Any:
    """Per task: its scorer's set-up (:func:`~privasis_bench.pipeline.scorers.setup_task`); every row skipped with
    --skip-invalid is named, not only counted."""
    setup = setup_task(task, opts, **how)
    for bad in setup.records.invalid:
        console.print(f"[yellow]{escape(setup.task.task)}: skipped invalid row {bad.row_number} (record "
                      f"{escape(bad.record_id)}): {escape(bad.field)}: {escape(bad.message)}[/]", highlight=False,
                      soft_wrap=True)
    return setup


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
    check_choice("--instruction", opts.instruction, INSTRUCTION_VARIANTS)
    check_choice("--parse-mode", opts.parse_mode, PARSE_MODES)


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
        show_plan(opts, spec, task_list, output, max_tokens=max_tokens, temperature=temperature,
                  setup=lambda task: _setup(task, opts, stream=True), roles=given)
        return
    if output is None:
        raise PrivasisError("run needs -o/--output, the run directory results are written to (only --plan runs without it)")
    if ray_opts is not None and opts.batch:
        raise PrivasisError("--batch runs with the local executor only; drop --executor ray or --batch")
    batch_options(opts)  # --batch values checked before anything is written
    for task in task_list:  # a scorer's bad settings (scorer_args, a judge) are said before anything is written
        setup_task(task, opts, load=False)
    session = Session(opts, rpm=rpm)
    outcomes: list[EvalOutcome] = []
    try:
        model_engine = session.engine(spec, "model")  # a bad model argument is said before anything is written
        ensure_dir(output, "--output")
        for task in task_list:
            started = now()
            setup = _setup(task, opts, stream=True)
            task, variant = setup.task, setup.instruction
            mt = max_tokens or task.generation.max_tokens
            temp = task.generation.temperature if temperature is None else temperature
            task_dir = output / task.task
            roles = task_roles(setup, opts, session, given)  # a role without batches (--batch ROLE) is said
            ray = None if ray_opts is None else dict(ray=ray_opts, model=(spec, model_engine), instruction=variant,
                                                       max_tokens=mt, temperature=temp)
            outcomes.append(_evaluate("run", setup, opts, session, task_dir, roles, lambda: OutputPlan(
                                          model_engine, OutputJournal(task, model_engine, task_dir / SANITIZED_NAME,
                                                                      instruction=variant, max_tokens=mt, temperature=temp)),
                                      ray=ray,
                                      asked=(model_engine, *roles.values()), started=started,
                                      model_info=model_description(spec, model_engine, max_tokens=mt, temperature=temp),
                                      engines=list(session.engines.values())))
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
    session = Session(opts)
    try:
        started = now()
        check_input_path("--predictions", predictions)  # said before the scorer loads its estimators
        setup = _setup(task_list[0], opts, stream=True)
        task = setup.task
        with task_dir_read_lock(predictions.parent, "evaluate", create=False):  # not while a run writes them
            given, model_info, left_out = setup.scorer.predictions(predictions, model_label, lambda loaded: _saved(
                predictions, loaded, setup, opts, format=prediction_format, model_label=model_label,
                postprocess=postprocess, missing_as_empty=score_missing_as_empty))
        roles = task_roles(setup, opts, session, roles_given)
        outcome = _evaluate("evaluate", setup, opts, session, output / task.task, roles,
                            lambda: OutputPlan(given=given, left_out=left_out),
                            ray=None if ray_opts is None else dict(ray=ray_opts, outputs=given),  # fills judged.jsonl
                            asked=tuple(roles.values()), started=started, model_info=model_info,
                            engines=list(roles.values()))
    finally:
        session.close()
    _finish([outcome])


def _saved(predictions: Path, loaded: Any, setup: Any, opts: Opts, *, format: str, model_label: Optional[str],
           postprocess: str, missing_as_empty: bool) -> tuple[Any, Any, Any]:
    """Saved outputs of the task's loaded rows in the harness's formats (our JSONL, lm-eval, inspect, reference):
    outputs, model section, the records left out (no prediction)."""
    from privasis_bench.pipeline.predictions import load_predictions

    preds = load_predictions(predictions, loaded.scored, format=format, task=setup.task, instruction=setup.instruction,
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


def _evaluate(command: str, setup: Any, opts: Opts, session: Session, task_dir: Path, roles: dict[str, Any],
              plan: Callable[[], OutputPlan], *, ray: dict[str, Any] | None, asked: tuple[Any, ...],
              **kw: Any) -> EvalOutcome:
    """One task through the runner, whatever the command: its directory locked, this invocation's spend recorded, the
    task's answer policies given to the engines it asks (``asked``), with --executor ray the Ray pass first (``ray``:
    its arguments; the local pass then reuses what it wrote), then the job (``plan``: where the outputs come from)."""
    with task_dir_lock(task_dir, command), session.spend(task_dir, command) as spend:  # before a ledger is written
        say_killed(spend)
        _task_policies(opts, setup.task, *asked)
        if ray is not None:  # privasis_bench.distributed, imported only when asked for
            from privasis_bench.distributed.evaluation import distributed_evaluation

            distributed_evaluation(setup.task, setup.records.scored, setup.choice, task_dir, options=session.options,
                                   judge_engine=roles.get("judge"), **ray)
        return evaluate_task(TaskJob(
            setup.task, setup.scorer, setup.records, plan(), task_dir, choice=setup.choice, roles=roles,
            instruction=setup.instruction, limit=opts.limit, bootstrap_samples=opts.bootstrap_samples, seed=opts.seed,
            checks=_checks(opts, setup.task), spend=spend, preset=opts.preset, **kw))


def register(app: typer.Typer) -> None:
    """Add ``run`` and ``evaluate`` (alias ``judge``)."""
    app.command("run")(run)
    app.command("evaluate")(evaluate)
    app.command("judge", help="Alias of evaluate: judge and score saved outputs.")(evaluate)
