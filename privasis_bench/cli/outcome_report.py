"""What ``run`` and ``evaluate`` print when they end: the metrics table (each family's report; the default,
:func:`print_measures`, is one table of measures per task), then every condition that needs a word (failed or
missing outputs, cut answers, off-label answers, unjudged records) with the option that changes it."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from privasis_bench.pipeline.run import EvalOutcome

console = Console()


def finish(outcomes: list[EvalOutcome]) -> None:
    """Print the metrics table and one line per condition a reader must know about; exit 1 on an unfinished run."""
    print_reports([o.results for o in outcomes])
    for o in outcomes:
        console.print(f"  -> {escape(str(o.task_dir))}", highlight=False)
        c, name = o.results["counts"], o.results["task"]["name"]
        if c["failed_outputs"] and o.results["checks"]["failed_outputs"] == "scored_as_empty":
            shown = " shown to the judge as \"\"" if (o.results.get("judge") or {}).get("empty_outputs") == "judge" else ""
            console.print(f"[yellow]{name}: {c['failed_outputs']} model output(s) failed and were scored as empty outputs"
                          f"{shown} (--score-failed-as-empty; see failed_output_records); a re-run retries them[/]",
                          highlight=False)
        elif c["failed_outputs"]:
            fix = ("fix those lines of the predictions file" if o.results["model"].get("predictions")
                   else "re-running `run` retries only those")
            if c.get("failed_outputs_cut_at_budget"):
                budget = (o.results["model"].get("generation") or {}).get("max_tokens")
                fix = (f"{c['failed_outputs_cut_at_budget']} of them because every answer was cut at the token budget "
                       f"({budget} tokens), which a re-run repeats: raise --max-tokens or pass --truncated-answers accept")
            empty = _empty_output(o.results)
            console.print(f"[red]{name}: {c['failed_outputs']} model output(s) failed (see failed_output_records): the results "
                          f"are incomplete[/]; {fix}, or pass --score-failed-as-empty to score them as {empty}",
                          highlight=False)
        report = o.results["model"].get("predictions") or {}
        if report.get("missing_policy") == "empty" and report.get("missing"):
            console.print(f"[yellow]{name}: {report['missing']} record(s) have no line in the predictions file and were "
                          "scored as empty outputs (--score-missing-as-empty; see model.predictions.missing_ids)[/]",
                          highlight=False, soft_wrap=True)
        if c.get("missing_predictions"):
            console.print(f"[red]{name}: {c['missing_predictions']} record(s) have no line in the predictions file and were "
                          "left out of the scores (see missing_prediction_records): the results are incomplete[/]; give a "
                          "predictions file covering every record (or --limit), or pass --score-missing-as-empty to score "
                          "them as empty outputs", highlight=False, soft_wrap=True)
        judge_cut = o.results["usage"].get("judge", {}).get("truncated", 0)
        by_task = o.results["checks"].get("tolerated_by_task", {})
        if c["truncated_outputs"] or judge_cut:
            why = " (tolerated by the task)" if {"truncated_answers", "judge_truncated_answers"} & set(by_task) else ""
            console.print(f"[yellow]{name}: {c['truncated_outputs']} model output(s) and {judge_cut} judge answer(s) were "
                          f"cut at the token budget and kept as they are{why}[/]", highlight=False)
        if c["off_label"]:
            limit = o.results["checks"]["max_off_label"]
            colour = "red" if c["off_label"] > limit else "yellow"
            source = f"tolerated by the task: up to {limit}" if "max_off_label" in by_task else \
                f"tolerated: --max-off-label {limit}"
            console.print(f"[{colour}]{name}: {c['off_label']} judge answer(s) are not one of the expected labels; they "
                          f"were read the official way (see off_label_answers; {source})[/]", highlight=False)
        if c["unparseable"]:
            console.print(f"[yellow]{o.results['task']['name']}: {c['unparseable']} record(s) with unparseable strict answers "
                          "left out of the metrics (see unparseable_records)[/]", highlight=False)
    unjudged = sum(o.results["counts"]["unjudged"] for o in outcomes)
    cut = [o.results for o in outcomes if o.results["counts"].get("unjudged_cut_at_budget")]
    if cut:
        j = cut[0]["judge"]
        console.print(f"[red]{unjudged} record(s) left unjudged: {sum(r['counts']['unjudged_cut_at_budget'] for r in cut)} "
                      f"because every judge answer was cut at the token budget (guess {j.get('guess_max_tokens')}, compare "
                      f"{j.get('compare_max_tokens')} tokens)[/]; the same command would fail the same way: raise "
                      "--judge-guess-max-tokens / --judge-compare-max-tokens, or pass --judge-truncated-answers accept",
                      highlight=False, soft_wrap=True)
    elif unjudged:
        console.print(f"[red]{unjudged} record(s) left unjudged (judge calls failed)[/]; re-run the same command to judge "
                      "only those.", highlight=False)
    if any(not o.ok for o in outcomes):
        raise typer.Exit(1)


def print_reports(results: list[dict]) -> None:
    """Each family's report of its results (``FamilySpec.report``), families in the order they first appear."""
    from privasis_bench.leaderboard.family_api import family_named
    from privasis_bench.tasks.family import family_name

    groups: dict[str, list[dict]] = {}
    for res in results:
        groups.setdefault(family_name(res), []).append(res)
    for name, group in groups.items():
        family_named(name).call("report", group)


def _empty_output(res: dict) -> str:
    """What scoring a failed output as empty means for the run's family (``FamilySpec.empty_output``)."""
    from privasis_bench.leaderboard.family_api import family_named
    from privasis_bench.tasks.family import family_name

    return family_named(family_name(res)).empty_output


def print_profile(clock: tuple[float, float], engines: list) -> None:
    """Wall time, the time each role had a call in flight, summed call time, and this process's CPU time."""
    import time

    from rich.table import Table
    from rich.text import Text

    from privasis_bench.adapters.spec import spec_label

    wall, cpu = time.perf_counter() - clock[0], time.process_time() - clock[1]
    table = Table(title="where the time went (--profile)", title_justify="left")
    for column in ("", "seconds", "share of wall time"):
        table.add_column(column, justify="left" if not column else "right")
    table.add_row("wall time", f"{wall:.1f}", "100%")
    for engine in engines:
        busy = engine.clock.busy_seconds
        label = Text(f"{engine.role} {spec_label(engine.spec)}: a call in flight")  # plain text: no markup, no emoji codes
        table.add_row(label, f"{busy:.1f}", f"{100 * busy / wall:.0f}%" if wall else "-")
        table.add_row(f"{engine.role}: summed call time ({engine.stats.batches} adapter calls for {engine.stats.requests} requests)", f"{engine.clock.call_seconds:.1f}", "")
    table.add_row("CPU time of this process (harness, and any in-process model)", f"{cpu:.1f}",
                  f"{100 * cpu / wall:.0f}%" if wall else "-")
    console.print(table)


def print_measures(results: list[dict[str, Any]]) -> None:
    """The default family report: one table per task's results, each measure with its bootstrap interval."""
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
