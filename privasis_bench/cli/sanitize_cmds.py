"""``privasis-bench sanitize``: run a model over a task's records and save its sanitized outputs."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.cli.batch_options import BATCH_OPTIONS, batch_options
from privasis_bench.cli.eval_cmds import Session, say_killed
from privasis_bench.cli.options import (
    DATA_OPTIONS,
    ENGINE_OPTIONS,
    TESTEE_OPTIONS,
    Opts,
    TasksOption,
    answer_policy,
    split_multi,
    with_options,
)
from privasis_bench.cli.plan_cmd import PLAN_OPTIONS, show_plan, wants_plan
from privasis_bench.cli.preset import SANITIZE_PRESET_OPTIONS, apply_preset
from privasis_bench.cli.value_checks import check_choice, check_finite
from privasis_bench.data.records import INSTRUCTION_VARIANTS
from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir
from privasis_bench.pipeline.flow import run_sanitize
from privasis_bench.pipeline.lock import task_dir_lock
from privasis_bench.pipeline.sanitize import summarize
from privasis_bench.pipeline.scorers import setup_task
from privasis_bench.tasks.registry import resolve_tasks

console = Console()
OUTPUT_NAME = "sanitized.jsonl"


class IncompleteRunError(PrivasisError):
    """Some records still have no output; the command exits with status 1 (a re-run resumes)."""

    exit_code = 1


def model_slug(spec: ModelSpec) -> str:
    """A file-system friendly name for a model spec, e.g. ``openai_gpt-4.1``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{spec.provider}_{spec.model}").strip("._")
    return slug or "model"


@with_options(DATA_OPTIONS, TESTEE_OPTIONS, SANITIZE_PRESET_OPTIONS, ENGINE_OPTIONS, BATCH_OPTIONS, PLAN_OPTIONS)
def sanitize(
    model: str = typer.Option(..., "--model", "-m", help="Model spec provider:model[,k=v...], e.g. openai:gpt-4.1 or identity:x."),
    model_args: Optional[str] = typer.Option(None, "--model-args", help="Extra model arguments k=v,k2=v2 (merged over the spec's)."),
    tasks: List[str] = TasksOption,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Output directory (default runs/<model-slug>); writes <dir>/<task>/sanitized.jsonl."),
    rpm: Optional[float] = typer.Option(None, "--rpm", min=0.1, max=1_000_000.0, help="At most this many requests per minute (0.1 to 1,000,000; a wait of 10 s or more is told in one line)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, max=1_000_000, help="Output token budget (default: the task's, 9024)."),
    temperature: Optional[float] = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature (default: the task's, 0)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Discard an existing output file instead of resuming it."),
    all_records: bool = typer.Option(False, "--all-records", help="Also send records that are never scored (no keep attribute)."),
    opts: Opts = None,  # type: ignore[assignment]  # filled by with_options
) -> None:
    """Run a model over each task's records; re-running the same command resumes where it stopped.

    Answers cut at the token budget follow --truncated-answers, else the task's answer_policy (as in `run`), else
    retry; empty answers follow --empty-answers. --preset paper keeps both as the paper's evaluator read them
    (judge the outputs with evaluate --preset paper). --batch model sends the calls through the provider's batch
    API (see docs/batch.md); --plan prints what the command would ask and cost, making no call.
    """
    max_tokens, temperature = apply_preset(opts, max_tokens=max_tokens, temperature=temperature)
    check_choice("--instruction", opts.instruction, INSTRUCTION_VARIANTS)
    check_finite("--temperature", temperature)
    spec = ModelSpec.parse(model, model_args)
    task_list = resolve_tasks(split_multi(tasks), opts.include_path)
    out_dir = output if output is not None else Path("runs") / model_slug(spec)
    batching = batch_options(opts, command="sanitize", lacks="judge")  # --batch values checked before anything is written
    if wants_plan(opts):  # --plan: counts and costs, no call, nothing written
        show_plan(opts, spec, task_list, out_dir, max_tokens=max_tokens, temperature=temperature,
                  setup=lambda task: setup_task(task, opts, all_records=all_records), all_records=all_records)
        return
    session = Session(opts, rpm=rpm, batch=batching)  # the cache before the adapter: a wrapper (decomp:) caches in it
    any_failed = any_cut = budget = 0
    try:  # the engine as `run` builds it: a bad model argument, or a provider without batches, is said before the
        engine = session.engine(spec, "model")  # output folder is made
        broker = session.brokers[("model", spec.key())]
        out_dir = ensure_dir(out_dir, "--output")
        for task in task_list:
            setup = setup_task(task, opts, all_records=all_records)
            task, loaded = setup.task, setup.records
            if engine.adapter.cacheable:  # the task's answer_policy, unless an option says otherwise (as `run` does)
                engine.answers = answer_policy(opts, "model", task=task)
            records = loaded.records if all_records else loaded.scored  # a scorer's own documents: every one
            out_path = out_dir / task.task / OUTPUT_NAME
            before = replace(engine.stats, usage=replace(engine.stats.usage))
            batched_before = replace(broker.counts) if broker is not None else None
            with task_dir_lock(out_path.parent, "sanitize"), session.spend(out_path.parent, "sanitize") as spend:
                say_killed(spend)
                outputs = run_sanitize(
                    records, task, engine, out_path,
                    instruction=opts.instruction, max_tokens=max_tokens, temperature=temperature, overwrite=overwrite,
                )
            counts = summarize(outputs)
            any_failed += counts["failed"]
            any_cut += counts["failed_cut"]
            budget = max_tokens or task.generation.max_tokens
            now = engine.stats
            sent = now.asked - before.asked
            cached = now.cached - before.cached
            skipped = len(loaded.records) - len(records)
            console.print(
                f"[bold]{task.task}[/]: {counts['records']} records ({counts['records'] - sent} resumed from the output file, "
                f"{cached} from the cache, {sent - cached} run); {counts['failed']} failed, {counts['empty']} empty, "
                f"{counts['truncated'] + counts['failed_cut']} cut at the token budget"
                + (f" ({counts['failed_cut']} of them failed)" if counts["failed_cut"] else "") + "; "
                f"{now.batches - before.batches} adapter call(s), {now.retries - before.retries} retries; tokens "
                f"{now.usage.prompt_tokens - before.usage.prompt_tokens} in / "
                f"{now.usage.completion_tokens - before.usage.completion_tokens} out"
                + (_batched_line(broker, batched_before) if broker is not None else "")
                + (f"; {skipped} unscored records not sent" if skipped else "")
                + (f"; {len(loaded.invalid)} invalid rows skipped" if loaded.invalid else ""),
                highlight=False, soft_wrap=True,
            )
            console.print(f"  -> {escape(str(out_path))}", highlight=False, soft_wrap=True)
    finally:
        session.close()
    if any_failed and any_cut:
        raise IncompleteRunError(
            f"{any_failed} record(s) failed, {any_cut} of them because every answer was cut at the token budget "
            f"({budget} tokens): raise --max-tokens or pass --truncated-answers accept, then re-run (finished records "
            "are kept)")
    if any_failed:
        raise IncompleteRunError(
            f"{any_failed} record(s) failed; re-run the same command to retry them (finished records are kept)"
        )


def _batched_line(broker: Any, before: Any) -> str:
    """What --batch model did for one task: provider batches submitted and collected, requests sent in them."""
    c = broker.counts
    return (f"; {c.submitted - before.submitted} provider batch(es) submitted, {c.recovered - before.recovered} "
            f"collected from an earlier run, {c.requests - before.requests} requests batched")


def register(app: typer.Typer) -> None:
    """Add the ``sanitize`` command."""
    app.command("sanitize")(sanitize)
