"""``privasis-bench export-sft`` and ``privasis-bench train``: from a corpus to a trained cleaner."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir
from privasis_bench.tasks.registry import build_index
from privasis_bench.training.overlap import DEFAULT_NGRAM, DEFAULT_THRESHOLD, EvalIndex
from privasis_bench.training.sft_export import ExportReport, ExportSettings, export_sft
from privasis_bench.training.sources import DEFAULT_PROMPT_TASK, resolve_sources

console = Console()


def default_eval_tasks() -> list[str]:
    """Every built-in evaluation task (test, validation and sample splits)."""
    return sorted(build_index().tasks)


def eval_index(specs: list[str], *, include_paths: list[str] | None, ngram: int, threshold: float) -> EvalIndex:
    """Index the evaluation records that training data must not contain."""
    index = EvalIndex(n=ngram, threshold=threshold)
    for spec in specs:
        try:
            sources = resolve_sources([spec], include_paths=include_paths)
        except PrivasisError as exc:
            raise PrivasisError(
                f"evaluation data {spec}: cannot load it to check that training rows stay out of it ({exc}); "
                "name the evaluation tasks or files you can load with --dedup-against, or pass --allow-eval-overlap"
            ) from None
        for source in sources:
            for record in source.loaded.records:
                index.add(record)
    return index


def _print_report(report: ExportReport, out: Path, heldout: Path | None) -> None:
    table = Table(title="export-sft", show_header=True)
    table.add_column("count")
    table.add_column("n", justify="right")
    verdicts = f"recorded {report.verdicts_recorded}, deterministic (--judge none rules) {report.verdicts_deterministic}"
    overlap = ", ".join(f"{k} {v}" for k, v in report.eval_overlap.items()) if report.overlap_check else "not checked"
    for name, value in (
        ("rows read", report.rows), ("invalid rows skipped", report.invalid_rows),
        ("no keep attribute (never scored)", report.no_keep_attributes),
        ("own rewrite not fully successful", report.not_fully_successful),
        ("empty sanitized text", report.empty_sanitized), ("duplicate id", report.duplicate_id),
        ("train examples", report.train), ("held-out examples", report.heldout),
    ):
        table.add_row(name, str(value))
    console.print(table)
    if report.verdicts_recorded or report.verdicts_deterministic:
        console.print(f"success filter (--only-successful) on; verdicts: {verdicts}", highlight=False)
    else:
        console.print("success filter off: every row is a training example, as in the paper (--only-successful to filter)",
                      highlight=False)
    console.print(f"evaluation overlap dropped ({report.eval_records_indexed} evaluation records): {overlap}", highlight=False)
    console.print(f"instructions: {report.instructions}", highlight=False)
    console.print(f"wrote {escape(str(out))}" + (f" and {escape(str(heldout))}" if heldout else ""), highlight=False)


def export_sft_cmd(
    inputs: List[str] = typer.Option(..., "--input", "-i", help="Corpus rows: task names/YAMLs or benchmark-schema jsonl/json/parquet files (repeatable)."),
    output: Path = typer.Option(..., "--output", "-o", help="Training JSONL to write (chat format: messages)."),
    instruction: str = typer.Option("smoothed", "--instruction", help="Instruction variant in the prompt: smoothed (the paper's final instruction), base, or mix (seeded 50/50 per record)."),
    only_successful: bool = typer.Option(False, "--only-successful", help="Keep only rows whose own rewrite is fully successful (a filter the paper does not describe; off by default)."),
    heldout: float = typer.Option(0.0, "--heldout", min=0.0, max=0.99, help="Fraction of kept rows sent to a held-out file (seeded by record id)."),
    heldout_output: Optional[Path] = typer.Option(None, "--heldout-output", help="Held-out JSONL (default: <output stem>.heldout.jsonl)."),
    seed: int = typer.Option(0, "--seed", min=0, max=2**32 - 1, help="Seed of the held-out and instruction-mix draws."),
    dedup_against: Optional[List[str]] = typer.Option(None, "--dedup-against", help="Evaluation tasks or files whose records must stay out (default: every built-in task)."),
    allow_eval_overlap: bool = typer.Option(False, "--allow-eval-overlap", help="Do not check overlap with evaluation records (ids, texts, near-duplicates)."),
    near_duplicate: float = typer.Option(DEFAULT_THRESHOLD, "--near-duplicate", min=0.01, max=1.0, help="Share of shared word n-grams that makes a near-duplicate."),
    ngram: int = typer.Option(DEFAULT_NGRAM, "--ngram", min=1, help="Word n-gram size of the near-duplicate check."),
    prompt_task: str = typer.Option(DEFAULT_PROMPT_TASK, "--prompt-task", help="Task whose prompt template and answer cue file inputs use."),
    include_path: Optional[List[str]] = typer.Option(None, "--include-path", help="Extra directory or YAML file with task definitions."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Read only the first N rows of each input."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip malformed rows (counted) instead of stopping."),
) -> None:
    """Export chat-format SFT data whose user turn is exactly the prompt `sanitize` sends."""
    ensure_dir(output.parent, "--output")  # an unwritable output path is said before the inputs are read
    settings = ExportSettings(instruction=instruction, heldout_fraction=heldout, seed=seed, only_successful=only_successful)
    sources = resolve_sources(inputs, prompt_task=prompt_task, include_paths=include_path, skip_invalid=skip_invalid, limit=limit)
    index = None
    if not allow_eval_overlap:
        index = eval_index(list(dedup_against or default_eval_tasks()), include_paths=include_path, ngram=ngram, threshold=near_duplicate)
    heldout_path = None
    if heldout > 0:
        heldout_path = heldout_output or output.with_name(output.stem + ".heldout.jsonl")
    report = export_sft(sources, output, settings=settings, eval_index=index, heldout_path=heldout_path)
    _print_report(report, output, heldout_path)
    if report.train == 0:
        raise PrivasisError(f"{output}: no training example survived the filters (see the counts above)")


def train_cmd(
    recipe: str = typer.Option(..., "--recipe", "-r", help="Training recipe: a shipped name (train_cleaner_0.6b, train_cleaner_4b) or a YAML path."),
    data: Path = typer.Option(..., "--data", help="Training JSONL written by export-sft."),
    output: Path = typer.Option(..., "--output", "-o", help="Model directory to write (transformers/vLLM layout, plus the card)."),
    base_model: Optional[str] = typer.Option(None, "--base-model", help="Override the recipe's base model (hub id or local directory)."),
    overrides: Optional[List[str]] = typer.Option(None, "--set", help="Override a recipe key, e.g. --set training.max_steps=100 --set lora.r=16 (repeatable)."),
    eval_data: Optional[Path] = typer.Option(None, "--eval-data", help="Held-out JSONL: its loss is computed after training."),
) -> None:
    """Fine-tune a cleaner with TRL's SFT trainer (pip extra: train) and write a model card."""
    from privasis_bench.training.card import write_card
    from privasis_bench.training.recipe import load_recipe
    from privasis_bench.training.trainer import read_sft_jsonl, train

    settings = list(overrides or []) + ([f"base_model={base_model}"] if base_model else [])
    loaded = load_recipe(recipe, settings)
    for option, path in (("--data", data), ("--eval-data", eval_data)):  # readable examples before minutes of loading
        if path is not None:
            if not path.is_file():
                raise PrivasisError(f"{option}: file not found: {path}")
            read_sft_jsonl(path)
    if not data.is_file():
        raise PrivasisError(f"--data: file not found: {data}")
    console.print(f"training {escape(loaded.base_model)} with recipe {escape(loaded.recipe)} on {escape(str(data))}", highlight=False)
    result = train(loaded, data, output, eval_path=eval_data)
    write_card(output, loaded, result, data, eval_data)
    if result.examples_used < result.examples:
        console.print(f"[yellow]note:[/] {result.examples - result.examples_used} of {result.examples} examples were not "
                      f"trained on: their answer did not fit training.max_length={loaded.training.max_length}", highlight=False)
    if result.losses:
        first, last = result.losses[0], result.losses[-1]
        console.print(f"loss {first['loss']:.4f} (step {first['step']}) -> {last['loss']:.4f} (step {last['step']})", highlight=False)
    if result.eval_loss is not None:
        console.print(f"held-out loss {result.eval_loss:.4f}", highlight=False)
    console.print(f"wrote {escape(str(output))} ({result.steps} steps, {result.runtime_s:.1f}s); evaluate with -m hf:{escape(str(output))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``export-sft`` and ``train``."""
    app.command("export-sft")(export_sft_cmd)
    app.command("train")(train_cmd)
