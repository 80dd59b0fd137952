"""Measurements beyond the paper's Table 4: ``agreement``, ``near-verbatim`` and ``linkage``.

None of them changes ``results.json``'s ``metrics`` or ``samples.jsonl``: each reads a run's files and prints
its own, clearly labelled numbers (``near-verbatim`` and ``linkage`` also write ``<task>/<name>.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir
from privasis_bench.pipeline.lock import run_read_locks
from privasis_bench.protocol.linkage import DEFAULT_K, linkage_report
from privasis_bench.protocol.linkage_support import target_support
from privasis_bench.protocol.near_verbatim import DEFAULT_THRESHOLD, near_verbatim_rows
from privasis_bench.results.agreement import agreement_runs
from privasis_bench.results.files import atomic_write_text, dumps_json, load_results, load_sample_rows, task_dirs
from privasis_bench.results.tables import compare_table

console = Console()


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _agreement_table(name: str, report: dict[str, Any]) -> Table:
    table = Table(title=f"{name}: judge agreement on {report['common_records']} common records"
                  + (f" ({report['outputs_differ']} with different outputs!)" if report["outputs_differ"] else ""),
                  title_justify="left")
    for col in ("decision", "pairs", "agreement %", "Cohen's kappa"):
        table.add_column(col, justify="left" if col == "decision" else "right")
    for key, label in (("leak_tier", "leak tier (direct/inference/proximity/sanitized)"),
                       ("leaked", "leaked or not"), ("retention", "retention (retained or not)")):
        part = report[key]
        table.add_row(label, str(part["decisions"]), _num(part["agreement"]), "undefined" if part["kappa"] is None else f"{part['kappa']:.3f}")
    return table


def _disagreement_table(name: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=f"{name}: attributes with the most disagreement", title_justify="left")
    for col in ("attribute", "kind", "disagreements", "decisions", "rate %"):
        table.add_column(col, justify="left" if col in ("attribute", "kind") else "right")
    for r in rows:
        table.add_row(escape(r["attribute"]), r["kind"], str(r["disagreements"]), str(r["decisions"]),
                      _num(r["disagreement_rate"]))
    return table


def agreement(
    a: Path = typer.Argument(..., help="First run directory (or task directory)."),
    b: Path = typer.Argument(..., help="Second run directory: the same outputs judged differently."),
    top: int = typer.Option(10, "--top", min=1, help="How many most-disagreed attributes to list."),
    bootstrap_samples: Optional[int] = typer.Option(None, "--bootstrap-samples", min=1, max=100_000, help="Resamples (default: A's setting)."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, max=2**32 - 1, help="Bootstrap seed (default: A's)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the report as JSON to this file."),
) -> None:
    """Judge agreement of two runs: per-decision agreement and Cohen's kappa, metric deltas, most-disagreed attributes."""
    if json_out is not None:  # an unwritable --json path is said before the work, not after
        ensure_dir(json_out.parent, "--json")
    with run_read_locks([a, b], "agreement"):
        reports = agreement_runs(a, b, top=top, bootstrap_samples=bootstrap_samples, seed=seed)
    for name, report in reports:
        console.print(_agreement_table(name, report))
        if report["most_disagreed"]:
            console.print(_disagreement_table(name, report["most_disagreed"]))
        if any(report[key]["kappa"] is None and report[key]["decisions"] for key in ("leak_tier", "retention")):
            console.print("  kappa is undefined when both judgings use one and the same label throughout", highlight=False)
        console.print(compare_table(name, report["metric_deltas"]))
    if json_out is not None:
        atomic_write_text(json_out, dumps_json({"a": str(a), "b": str(b), "tasks": dict(reports)}))
        console.print(f"  -> {escape(str(json_out))}", highlight=False)


def _annotated(results: dict[str, Any], task_dir: Path) -> dict[str, dict[str, Any]]:
    """Every annotated attribute (record id -> name -> value) of the run's task, loaded from its task definition."""
    from privasis_bench.data.loading import load_records
    from privasis_bench.tasks.registry import load_task

    name = (results.get("task") or {}).get("name")
    if not name:
        raise PrivasisError(f"{task_dir / 'results.json'}: no task name to load annotations from (drop --annotated)")
    records = load_records(load_task(name)).records
    return {r.id: {n: v for group in r.groups.values() if isinstance(group, dict) for n, v in group.items()}
            for r in records}


def linkage(
    run_dir: Path = typer.Argument(..., help="Run directory (or task directory) to attack."),
    k: int = typer.Option(DEFAULT_K, "-k", min=1, help="How many non-target attributes the adversary knows."),
    seed: int = typer.Option(0, "--seed", min=0, max=2**32 - 1, help="Seed for the adversary's choice of attributes and the bootstrap."),
    judge: str = typer.Option("none", "--judge", help="Judge model spec for the target-support score of linked "
                              "records, or 'none' for the linkage rate alone."),
    judge_args: Optional[str] = typer.Option(None, "--judge-args", help="Extra judge arguments k=v,k2=v2."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Response cache directory (default: the usual)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the response cache."),
    annotated: bool = typer.Option(False, "--annotated", help="Also let the adversary know the record's other "
                                   "annotated attributes (reloads the task's data by its name)."),
    bootstrap_samples: int = typer.Option(1000, "--bootstrap-samples", min=1, max=100_000, help="Bootstrap resamples."),
) -> None:
    """Re-identification linkage: BM25 over the run's outputs from k known facts; writes <task>/linkage.json."""
    ask, close = _judge_caller(judge, judge_args, cache_dir, no_cache)
    try:
        with run_read_locks([run_dir], "linkage"):
            for task_dir in task_dirs(run_dir):
                _linkage_task(task_dir, k=k, seed=seed, annotated=annotated, bootstrap_samples=bootstrap_samples,
                              judge=None if ask is None else judge, ask=ask)
    finally:
        close()


def _judge_caller(judge: str, judge_args: Optional[str], cache_dir: Optional[Path], no_cache: bool):
    """A batch caller for the judge through the engine and cache (None for --judge none) and its closer."""
    if judge.strip().lower() == "none":
        return None, lambda: None
    from privasis_bench.adapters.spec import ModelSpec
    from privasis_bench.engine.cache import open_response_cache
    from privasis_bench.pipeline.run import EngineOptions

    spec = ModelSpec.parse(judge, judge_args)
    cache = open_response_cache(cache_dir, no_cache)
    engine = EngineOptions(cache=cache, progress=False).engine(spec, "judge")

    def close() -> None:
        engine.close()
        if cache is not None:
            cache.close()

    return (lambda requests: engine.run(requests, desc="linkage support")), close


def _linkage_task(task_dir: Path, *, k: int, seed: int, annotated: bool, bootstrap_samples: int, judge, ask) -> None:
    """Attack one task directory, optionally rate what the linked outputs still support, write linkage.json."""
    results = load_results(task_dir)
    extra = _annotated(results, task_dir) if annotated else None
    rows = load_sample_rows(task_dir)
    report = linkage_report(rows, k=k, seed=seed, bootstrap_samples=bootstrap_samples, extra=extra)
    report.update({"judge": judge, "target_support": "not computed (--judge none)",
                   "known_attributes": "keep + other annotated" if annotated else "keep"})
    if ask is not None:
        report["target_support"] = target_support(rows, report["attacks"], ask, bootstrap_samples=bootstrap_samples,
                                                  seed=seed, confidence=0.95)
    atomic_write_text(task_dir / "linkage.json", dumps_json(report))
    fewer, most = report["attacks_knowing_fewer_than_k"], report["most_known_attributes"]
    if fewer == report["attacked_records"] and fewer:  # -k changes nothing: every attack knows all it can
        console.print(f"[yellow]{escape(str(task_dir))}: -k {k} is more than any attacked record knows (at most {most} "
                      f"attribute(s)): every attack used all its known attributes, as -k {most} would[/]",
                      highlight=False, soft_wrap=True)
    elif fewer:
        console.print(f"[yellow]{escape(str(task_dir))}: {fewer} of {report['attacked_records']} attacked record(s) have "
                      f"fewer than -k {k} known attributes and were attacked with all of theirs "
                      "(attacks_knowing_fewer_than_k in linkage.json)[/]", highlight=False, soft_wrap=True)
    rate, ci = report["linkage_rate"], report["ci"]
    shown = "undefined (no record could be attacked)" if rate is None else (
        f"{rate:.2f}% [{_num(ci['low'])}, {_num(ci['high'])}]")
    console.print(f"{escape(task_dir.name)}: linkage (beyond Table 4) {shown}: {report['linked_records']}/"
                  f"{report['attacked_records']} records linked, k={k}, seed={seed}"
                  + ("" if report["corpus_has_terms"] else "; the outputs hold no searchable term"), highlight=False)
    if ask is not None:
        sup = report["target_support"]
        console.print(f"  target info still supported in linked outputs: {_num(sup['support'])}% "
                      f"[{_num(sup['ci']['low'])}, {_num(sup['ci']['high'])}] over {sup['rated_records']} records "
                      f"({sup['failed_calls']} failed calls, {sup['unparseable_answers']} unreadable answers)",
                      highlight=False)
    console.print(f"  -> {escape(str(task_dir / 'linkage.json'))}", highlight=False)


def near_verbatim(
    run_dir: Path = typer.Argument(..., help="Run directory (or task directory)."),
    threshold: float = typer.Option(DEFAULT_THRESHOLD, "--threshold", min=50, max=100, help="Fuzzy similarity cut-off (0-100)."),
) -> None:
    """Near-verbatim leaks: targets carried in a slightly altered form; writes <task>/near_verbatim.json."""
    with run_read_locks([run_dir], "near-verbatim"):
        _near_verbatim(run_dir, threshold)


def _near_verbatim(run_dir: Path, threshold: float) -> None:
    for task_dir in task_dirs(run_dir):
        report = {"measurement": "near-verbatim leaks (beyond Table 4, not part of the metrics)",
                  **near_verbatim_rows(load_sample_rows(task_dir), threshold=threshold)}
        atomic_write_text(task_dir / "near_verbatim.json", dumps_json(report))
        counts = report["counts"]
        console.print(f"{escape(task_dir.name)}: near-verbatim (beyond Table 4) {counts['near_verbatim']} of "
                      f"{report['targets_with_value']} targets ({_num(report['near_verbatim_rate'])}%), verbatim "
                      f"{counts['verbatim']}; by rule {report['by_rule']}", highlight=False)
        console.print(f"  -> {escape(str(task_dir / 'near_verbatim.json'))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``agreement``, ``linkage`` and ``near-verbatim``."""
    app.command("agreement")(agreement)
    app.command("linkage")(linkage)
    app.command("near-verbatim")(near_verbatim)
