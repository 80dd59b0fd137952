"""``run --plan`` and ``sanitize --plan``: print per role what the command would ask and cost, without calling any
model (see pipeline/plan)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.cli.roles import role_models
from privasis_bench.engine.cache import open_response_cache
from privasis_bench.errors import PrivasisError
from privasis_bench.pipeline.plan import RolePlan, plan_task
from privasis_bench.pipeline.prices import Price, load_prices

PLAN_OPTIONS: dict[str, tuple[Any, Any]] = {
    "plan": (bool, typer.Option(False, "--plan", help="Print per role how many requests the command would make, their "
                                "estimated prompt tokens and (with --prices) cost live and batched; make no call.")),
    "prices": (Optional[Path], typer.Option(None, "--prices", help="Price table for --plan (YAML: provider:model -> "
                                            "input/output per 1M tokens, optional batch_input/batch_output or "
                                            "batch_discount; see docs/batch.md).")),
}

console = Console()


def wants_plan(opts: Any) -> bool:
    """True for ``--plan``; ``--prices`` without it is one line (exit 2)."""
    if opts.prices is not None and not opts.plan:
        raise PrivasisError("--prices is read by --plan only; add --plan (no call is made) or drop --prices")
    return bool(opts.plan)


def _money(value: float | None) -> str:
    return "no price" if value is None else f"{value:,.4f}"


def plan_line(plan: RolePlan, prices: dict[str, Price] | None) -> str:
    """One role's plan as a line."""
    live, batched = plan.costs(prices)
    most = "at most " if plan.upper_bound else ""
    line = (f"  {plan.role} {plan.label}: {most}{plan.requests:,} requests ({plan.answered:,} already answered), "
            f"about {plan.prompt_tokens:,} prompt tokens, at most {plan.output_tokens:,} output tokens")
    if prices is not None:
        line += f"; cost {most}live {_money(live)}, batched {_money(batched)}"
    return line


def show_plan(opts: Any, spec: ModelSpec, tasks: list[Any], output: Optional[Path], *, max_tokens: Optional[int],
              temperature: Optional[float], setup: Callable[[Any], Any], all_records: bool = False,
              roles: dict[str, str] | None = None) -> None:
    """Print the plan of every task (``setup``: the command's own set-up of a task, a
    :class:`~privasis_bench.tasks.scoring.Setup`; ``roles``: the ``--role`` values, None for a command that asks no
    role). ``all_records``: the command also sends records that are never scored (``sanitize --all-records``)."""
    prices = load_prices(opts.prices) if opts.prices is not None else None
    cache = open_response_cache(opts.cache_dir, opts.no_cache)
    try:
        for task in tasks:
            given = setup(task)
            task = given.task
            records = list(given.records.records if all_records else given.records.scored)
            plans = plan_task(task, records, output / task.task if output is not None else None, model=spec,
                              scorer=given.scorer, roles=role_models(given, opts, roles) if roles is not None else {},
                              cache=cache, instruction=given.instruction, max_tokens=max_tokens or task.generation.max_tokens,
                              temperature=task.generation.temperature if temperature is None else temperature)
            console.print(f"plan for {escape(task.task)} ({len(records)} records; no call made):", highlight=False)
            for plan in plans:
                console.print(escape(plan_line(plan, prices)), highlight=False, soft_wrap=True)
    finally:
        if cache is not None:
            cache.close()
