"""``generate`` and ``build-corpus``: the data recipes (records synthesis and the sanitization corpus)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.cli.executor_options import EXECUTOR_OPTIONS, ray_options
from privasis_bench.cli.options import ENGINE_OPTIONS, Opts, answer_policy, retry_policy, with_options
from privasis_bench.engine.cache import open_response_cache
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.stats import fault_summary
from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir
from privasis_bench.pipeline.lock import task_dir_lock
from privasis_bench.protocol.judge import JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.recipes.config import load_recipe
from privasis_bench.recipes.corpus import CorpusContext
from privasis_bench.recipes.drivers import read_inputs, run_build_corpus
from privasis_bench.recipes.steps import engine_ask
from privasis_bench.recipes.store import RowStore
from privasis_bench.tasks.registry import load_task

console = Console()

RecipeOpt = typer.Option(..., "--recipe", "-r", help="Recipe name (shipped under tasks/recipes/) or a recipe YAML path.")
ModelOpt = typer.Option(..., "--model", "-m", help="Model spec for every step, e.g. llamacpp:smollm2 or openai:gpt-4.1.")
ModelArgsOpt = typer.Option(None, "--model-args", help="Extra model arguments k=v,k2=v2.")
JudgeOpt = typer.Option(None, "--judge", help="Judge model spec (default: --model); 'none' for direct/verbatim-only labels.")
OutputOpt = typer.Option(..., "--output", "-o", help="Output directory (re-running the same command resumes).")
BatchOpt = typer.Option(8, "--batch-size", min=1, help="Rows per batch (each step runs over a whole batch at once).")
OverwriteOpt = typer.Option(False, "--overwrite", help="Discard existing outputs in --output instead of resuming.")


class _Engines:
    """One engine per distinct model spec, with a shared response cache; closed at the end."""

    def __init__(self, opts: Opts) -> None:
        self.opts = opts
        self.cache = open_response_cache(opts.cache_dir, opts.no_cache)
        self.engines: dict[str, Engine] = {}

    def get(self, spec: ModelSpec, role: str) -> Engine:
        if spec.key() not in self.engines:
            self.engines[spec.key()] = Engine(build_adapter(spec), spec, role=role, cache=self.cache,
                                              retry=retry_policy(self.opts), concurrency=self.opts.concurrency,
                                              progress=self.opts.progress,
                                              answers=answer_policy(self.opts, "model", truncated_default="accept"))
        return self.engines[spec.key()]

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()
        if self.cache is not None:
            self.cache.close()
        for engine in self.engines.values():  # a degrading server is summarised: retries, faults by kind
            line = fault_summary(engine.role, str(engine.spec), engine.stats)
            if line:
                _say(line)


def _say(message: str) -> None:
    console.print(escape(message), highlight=False, soft_wrap=True)


@with_options(ENGINE_OPTIONS, EXECUTOR_OPTIONS)
def build_corpus(
    recipe: str = RecipeOpt,
    model: str = ModelOpt,
    model_args: Optional[str] = ModelArgsOpt,
    judge: Optional[str] = JudgeOpt,
    inputs: List[Path] = typer.Option(..., "--input", "-i", help="Corpus JSONL file(s) with record, attributes, grouped_attributes."),
    output: Path = OutputOpt,
    batch_size: int = BatchOpt,
    overwrite: bool = OverwriteOpt,
    opts: Opts = None,  # type: ignore[assignment]
) -> None:
    """Build Privasis-Zero benchmark rows (vanilla / hard) from annotated records with the decomposition pipeline."""
    ray_opts = ray_options(opts)
    config = load_recipe(recipe)
    if config.kind != "corpus":
        raise PrivasisError(f"--recipe {recipe}: is a {config.kind!r} recipe; build-corpus needs a 'corpus' recipe")
    rows = read_inputs(inputs)
    spec = ModelSpec.parse(model, model_args)
    task = load_task(config.judge_task or "privasis_vanilla")
    judge_off = judge is not None and judge.strip().lower() == "none"
    judge_spec = None if judge_off else (ModelSpec.parse(judge) if judge else spec)
    settings = {"recipe": config.recipe, "recipe_sha": config.fingerprint(), "model": spec.key(),
                "judge": judge_spec.key() if judge_spec else "none"}
    with task_dir_lock(ensure_dir(output, "--output"), "build-corpus"):  # one writer per output folder
        summary, store = _build_corpus_locked(config, rows, task, spec, judge_spec, judge_off, settings, output,
                                              batch_size, overwrite, ray_opts, opts)
    _report_corpus(summary, store)


def _build_corpus_locked(config: Any, rows: list, task: Any, spec: ModelSpec, judge_spec: Optional[ModelSpec],
                         judge_off: bool, settings: dict, output: Path, batch_size: int, overwrite: bool,
                         ray_opts: Any, opts: Opts) -> tuple[dict, RowStore]:
    """build-corpus's work while it holds the output folder's lock: (the run's counts, the row store)."""
    store = RowStore(output, "benchmark", settings, overwrite=overwrite)
    engines = _Engines(opts)
    try:
        engine = engines.get(spec, "model")
        judge_engine = engines.get(judge_spec, "judge") if judge_spec else None
        cfg = _judge_config(task, config)
        changed = f" with the recipe's changes {config.judge}" if config.judge else ""
        _say(f"judge: {judge_spec.key() if judge_spec else 'none (direct/verbatim checks only)'}; settings of task {task.task}{changed}: "
             f"guess_max_tokens={cfg.guess_max_tokens}, compare_max_tokens={cfg.compare_max_tokens}, "
             f"temperature={cfg.temperature}, parse_mode={cfg.parse_mode}")
        ctx = CorpusContext(
            recipe=config,
            ask=engine_ask(engine),
            judge_prompts=JudgePrompts.load(cfg.templates),
            judge_settings=JudgeSettings(parse_mode=cfg.parse_mode, temperature=cfg.temperature, enabled=not judge_off,
                                         guess_max_tokens=cfg.guess_max_tokens, compare_max_tokens=cfg.compare_max_tokens),
            judge_ask=(lambda reqs: judge_engine.run(reqs, desc="label")) if judge_engine else None,
        )
        on_ray = _corpus_on_ray(ray_opts, engines, output, ctx, spec, judge_spec) if ray_opts is not None else None
        summary = run_build_corpus(rows, ctx, store, batch_size=batch_size, log=_say, map_batches=on_ray)
    finally:
        engines.close()
    return summary, store


def _report_corpus(summary: dict, store: RowStore) -> None:
    """build-corpus's closing lines; exit 1 when input rows failed."""
    _say(f"{summary['rows']} benchmark rows ({summary['vanilla']} vanilla, {summary['hard']} hard, {summary['unscored']} "
         f"without keep attributes); this run: {summary['built']} built, {summary['resumed']} resumed, {summary['failed']} failed")
    if summary.get("ranking_unparsed"):
        _say(f"{summary['ranking_unparsed']} row(s) had a sensitivity ranking the model's answer did not state readably; "
             "their targets were drawn uniformly (counted as ranking_unparsed in corpus.meta.json); "
             "a larger generation.rank.max_tokens or a stronger model avoids it")
    _say(f"  -> {store.path}, vanilla.jsonl, hard.jsonl, task.yaml (run it with: privasis-bench run --tasks {store.dir / 'task.yaml'} ...)")
    if summary["failures_pending"]:
        _say(f"{summary['failures_pending']} input row(s) failed (see {store.failures_path}); re-run the same command to retry them")
        raise typer.Exit(1)


def _judge_config(task: Any, recipe: Any) -> Any:
    """The task's judge settings with the recipe's ``judge:`` changes (validated like a task file's)."""
    from pydantic import ValidationError

    allowed = {"guess_max_tokens", "compare_max_tokens", "temperature", "parse_mode"}
    unknown = sorted(set(recipe.judge) - allowed)
    if unknown:
        raise PrivasisError(f"recipe {recipe.source_file}: judge.{unknown[0]} cannot be changed (allowed: {', '.join(sorted(allowed))})")
    try:
        return type(task.judge).model_validate({**task.judge.model_dump(), **recipe.judge})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise PrivasisError(f"recipe {recipe.source_file}: judge.{'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def _corpus_on_ray(ray_opts: Any, engines: _Engines, output: Path, ctx: CorpusContext, spec: ModelSpec,
                   judge_spec: Optional[ModelSpec]) -> Any:
    """--executor ray: the batches of build-corpus run on the cluster (privasis_bench.distributed, imported only then)."""
    from privasis_bench.distributed.recipes import corpus_batches_on_ray

    return corpus_batches_on_ray(ray_opts, _ray_engines(engines), output, recipe=ctx.recipe, spec=spec, judge_spec=judge_spec,
                                 judge_prompts=ctx.judge_prompts, judge_settings=ctx.judge_settings)


@with_options(ENGINE_OPTIONS, EXECUTOR_OPTIONS)
def generate(
    recipe: str = RecipeOpt,
    model: str = ModelOpt,
    model_args: Optional[str] = ModelArgsOpt,
    judge: Optional[str] = typer.Option(None, "--judge", help="Model that compares a draft with its revision (default: --model)."),
    n: int = typer.Option(..., "-n", "--num-records", min=1, help="How many corpus rows to produce."),
    output: Path = OutputOpt,
    batch_size: int = typer.Option(4, "--batch-size", min=1, help="Records per batch (each step runs over a whole batch at once)."),
    overwrite: bool = OverwriteOpt,
    opts: Opts = None,  # type: ignore[assignment]
) -> None:
    """Synthesize annotated records (profile, type, context, format, draft, refinement, attributes, groups)."""
    from privasis_bench.recipes.seeds import SeedFiles

    ray_opts = ray_options(opts)
    config = load_recipe(recipe)
    if config.kind != "synthesis":
        raise PrivasisError(f"--recipe {recipe}: is a {config.kind!r} recipe; generate needs a 'synthesis' recipe")
    files = SeedFiles.load(config)
    spec = ModelSpec.parse(model, model_args)
    judge_spec = ModelSpec.parse(judge) if judge else spec
    settings = {"recipe": config.recipe, "recipe_sha": config.fingerprint(), "model": spec.key(), "judge": judge_spec.key()}
    with task_dir_lock(ensure_dir(output, "--output"), "generate"):  # one writer per output folder
        store = RowStore(output, "corpus", settings, overwrite=overwrite)
        counts = _generate_locked(config, files, spec, judge_spec, n, output, batch_size, store, ray_opts, opts)
    acc, total = counts["acceptance"], counts["cumulative"]["acceptance"]
    _say(f"{counts['rows']}/{n} corpus rows ({counts['generated']} new, {counts['resumed']} resumed, {counts['failed']} failed "
         f"attempts); revisions accepted {total['accepted']}/{total['revisions']} over all runs "
         f"({acc['accepted']}/{acc['revisions']} in this one)")
    if counts["rows"]:
        _say(f"  -> {store.path} (failures: {store.failures_path}, statistics: {store.meta_path})")
    else:
        _say(f"  no corpus row yet, so no {store.path.name} (failures: {store.failures_path}, statistics: {store.meta_path})")
    if counts["rows"] < n:
        _say(f"only {counts['rows']} of {n} rows could be produced; re-run to retry the failed records")
        raise typer.Exit(1)


def _generate_locked(config: Any, files: Any, spec: ModelSpec, judge_spec: ModelSpec, n: int, output: Path,
                     batch_size: int, store: RowStore, ray_opts: Any, opts: Opts) -> dict:
    """generate's work while it holds the output folder's lock: the run's counts."""
    from privasis_bench.recipes.diversity import Embedder
    from privasis_bench.recipes.drivers import run_generate
    from privasis_bench.recipes.synthesis import SynthesisContext

    engines = _Engines(opts)
    try:
        engine, judge_engine = engines.get(spec, "model"), engines.get(judge_spec, "judge")
        ctx = SynthesisContext(recipe=config, files=files, ask=engine_ask(engine), judge_ask=engine_ask(judge_engine),
                               embed=Embedder(config.synthesis.embedding_model))
        steps = _synthesis_on_ray(ray_opts, engines, output, ctx, spec, judge_spec, batch_size) if ray_opts else None
        try:
            counts = run_generate(n, ctx, store, batch_size=batch_size, log=_say, steps=steps)
        finally:
            if steps is not None:
                steps.close()
    finally:
        engines.close()
    return counts


def _ray_engines(engines: _Engines) -> Any:
    """How the recipe's engines are rebuilt on Ray workers: the local settings and the shared cache."""
    from privasis_bench.distributed.recipes import RecipeEngines

    return RecipeEngines(retry=retry_policy(engines.opts), answers=answer_policy(engines.opts, "model", truncated_default="accept"), concurrency=engines.opts.concurrency,
                         cache=engines.cache)


def _synthesis_on_ray(ray_opts: Any, engines: _Engines, output: Path, ctx: Any, spec: ModelSpec, judge_spec: ModelSpec,
                      batch_size: int) -> Any:
    """--executor ray: generate's drafts and batches run on the cluster (privasis_bench.distributed, imported only then)."""
    from privasis_bench.distributed.recipes import RaySynthesis

    return RaySynthesis(ray_opts, _ray_engines(engines), output, recipe=ctx.recipe, files=ctx.files, spec=spec,
                        judge_spec=judge_spec, batch_size=batch_size)


def register(app: typer.Typer) -> None:
    """Add the recipe commands."""
    app.command("generate")(generate)
    app.command("build-corpus")(build_corpus)
