"""``privasis-bench export``: a finished run (or a board entry) as flat tables or as Hub eval-results files.

Nothing is uploaded unless ``--push`` is given; then ``huggingface_hub`` opens a pull request on the model
repository (``--create-pr``, the default) with the ``.eval_results/`` files.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any, Iterable, Optional

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import ensure_dir
from privasis_bench.results.export import (
    find_task_runs,
    hub_entries,
    hub_yaml,
    metric_rows,
    record_rows,
    require_finished,
)

console = Console(soft_wrap=True)
FORMATS = ("hub", "eee", "csv", "jsonl")


def _write_table(path: Path, rows: Iterable[dict[str, Any]], fmt: str) -> int:
    rows = list(rows)
    with path.open("w", encoding="utf-8", newline="") as handle:
        if fmt == "jsonl":
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
        else:
            columns = list(dict.fromkeys(k for row in rows for k in row))
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    return len(rows)


def _dataset_ids(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        task, sep, dataset = pair.partition("=")
        if not sep or not task or "/" not in dataset:
            raise PrivasisError(f"--dataset-id {pair!r}: expected TASK=OWNER/NAME")
        out[task] = dataset
    return out


def _push(files: dict[str, Path], repo: str, create_pr: bool) -> None:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise PrivasisError(f"--push {repo}: the Hub is switched off here (HF_HUB_OFFLINE is set); the files are "
                            "written, upload them from a machine that reaches the Hub")
    from huggingface_hub import CommitOperationAdd, HfApi

    operations = [CommitOperationAdd(path_in_repo=f".eval_results/{name}.yaml", path_or_fileobj=str(path))
                  for name, path in files.items()]
    try:
        info = HfApi().create_commit(repo_id=repo, operations=operations, create_pr=create_pr,
                                     commit_message="Add privasis-bench evaluation results")
    except Exception as exc:  # noqa: BLE001 - network and auth errors become one line
        raise PrivasisError(f"--push {repo}: the Hub refused or could not be reached: "
                            f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}") from None
    where = getattr(info, "pr_url", None) or getattr(info, "commit_url", None)
    console.print(f"pushed {len(files)} file(s) to {escape(repo)}: {escape(str(where))}", highlight=False)


def export(
    run_dir: Path = typer.Argument(..., help="A run directory, one task directory, or a board entry (submissions/NAME)."),
    fmt: str = typer.Option("csv", "--format", "-f", help="hub (.eval_results YAML), csv or jsonl (flat tables)."),
    output: Path = typer.Option(..., "--output", "-o", help="The folder to write into."),
    records: bool = typer.Option(False, "--records", help="csv/jsonl: also write one row per record (records.csv/.jsonl)."),
    dataset_id: list[str] = typer.Option([], "--dataset-id", help="hub: TASK=OWNER/NAME for a task that read local files."),
    source_url: Optional[str] = typer.Option(None, "--source-url", help="hub: a link to the results (the board, a log)."),
    source_name: Optional[str] = typer.Option(None, "--source-name", help="hub: the link's display name."),
    push: Optional[str] = typer.Option(None, "--push", help="hub: upload to this model repository (OWNER/NAME)."),
    create_pr: bool = typer.Option(True, "--create-pr/--no-create-pr", help="--push: open a pull request (default)."),
    relationship: Optional[str] = typer.Option(None, "--evaluator-relationship", help="eee: your relationship to the "
                                               "model: first_party, third_party, collaborative or other (required)."),
    organization: Optional[str] = typer.Option(None, "--organization", help="eee: who ran the evaluation (required)."),
    model_id: Optional[str] = typer.Option(None, "--model-id", help="eee: the model's id in Hub form (OWNER/NAME); "
                                           "default: provider/model from the run's spec."),
    availability: str = typer.Option("unknown", "--model-availability", help="eee: open_weights, closed_weights or unknown."),
    eee_python: Optional[Path] = typer.Option(None, "--eee-python", help="eee: a Python with every-eval-ever (3.12+) to "
                                              "validate and read back the files (default: $PRIVASIS_EEE_PYTHON, then .venv-eee)."),
) -> None:
    """Export finished runs as flat metric tables (csv, jsonl) or as the Hub's eval-results files."""
    if fmt not in FORMATS:
        raise PrivasisError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if push and fmt != "hub":
        raise PrivasisError("--push uploads Hub eval-results files: use it with --format hub")
    runs = find_task_runs(run_dir)
    for run in runs:
        require_finished(run)
    if output.exists() and not output.is_dir():
        raise PrivasisError(f"--output {output}: is a file; give the folder to write into")
    ensure_dir(output, "--output")
    if fmt == "eee":
        _export_eee(runs, output, relationship, organization, model_id, availability, eee_python)
        return
    if fmt == "hub":
        written: dict[str, Path] = {}
        for variant, entries in hub_entries(runs, source_url=source_url, source_name=source_name,
                                            dataset_ids=_dataset_ids(dataset_id)).items():
            path = output / f"{variant}.yaml"
            path.write_text(hub_yaml(entries), encoding="utf-8")
            written[variant] = path
            console.print(f"wrote {escape(str(path))} ({len(entries)} task(s))", highlight=False)
        if push:
            _push(written, push, create_pr)
        return
    n = _write_table(output / f"metrics.{fmt}", metric_rows(runs), fmt)
    console.print(f"wrote {escape(str(output / f'metrics.{fmt}'))} ({n} rows)", highlight=False)
    if records:
        n = _write_table(output / f"records.{fmt}", record_rows(runs), fmt)
        console.print(f"wrote {escape(str(output / f'records.{fmt}'))} ({n} rows)", highlight=False)


def _eee_python(given: Optional[Path]) -> Optional[Path]:
    for candidate in (given, os.environ.get("PRIVASIS_EEE_PYTHON"), Path(".venv-eee/bin/python")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    if given is not None:
        raise PrivasisError(f"--eee-python {given}: no such file")
    return None


def _export_eee(runs: list, output: Path, relationship: Optional[str], organization: Optional[str],
                model_id: Optional[str], availability: str, eee_python: Optional[Path]) -> None:
    import subprocess
    import time

    from privasis_bench.results.eee import RELATIONSHIPS, eee_record, write_record

    if relationship is None or organization is None:
        raise PrivasisError("--format eee needs --evaluator-relationship (" + ", ".join(RELATIONSHIPS) +
                            ") and --organization (who ran the evaluation): EEE records state both")
    if availability not in ("open_weights", "closed_weights", "unknown"):
        raise PrivasisError(f"--model-availability {availability!r}: choose open_weights, closed_weights or unknown")
    retrieved = int(time.time())
    files: list[str] = []
    for run in runs:
        record = eee_record(run, relationship=relationship, organization=organization, model_id=model_id,
                            availability=availability, retrieved=retrieved)
        for path in write_record(record, output):
            files.append(path.relative_to(output).as_posix())
            console.print(f"wrote {escape(str(path))}", highlight=False)
    python = _eee_python(eee_python)
    if python is None:
        console.print("not validated: no Python with every-eval-ever found (it needs Python 3.12+; give one with "
                      "--eee-python or PRIVASIS_EEE_PYTHON)", highlight=False)
        return
    checker = Path(__file__).resolve().parents[1] / "results" / "eee_check.py"
    proc = subprocess.run([str(python), str(checker), str(output), *files], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise PrivasisError(f"--eee-python {python}: the check failed: {proc.stderr.strip().splitlines()[-1:]}")
    checked = json.loads(proc.stdout)
    bad = [r for r in checked["report"] if not r.get("valid") or r.get("warnings")]
    bad += [{"file": k, "errors": ["sidecar checksum or row count differs"]} for k, v in checked["sidecars"].items()
            if not (v["exists"] and v["checksum_ok"] and v["rows_ok"])]
    if bad:
        first = bad[0]
        raise PrivasisError(f"every-eval-ever refuses {first.get('file')}: {(first.get('errors') or first.get('warnings'))[:1]}")
    console.print(f"every-eval-ever {python}: {len(files)} file(s) valid, read back, sidecar checksums match", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``export`` command."""
    app.command("export")(export)
