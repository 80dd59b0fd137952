"""``privasis-bench lm-eval-path``: where the shipped lm-eval task YAMLs are, and how to run them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional

import typer

from privasis_bench.errors import PrivasisError
from privasis_bench.interop.lmeval import example_command, lmeval_tasks_dir, shipped_names

_TASKS, _GROUPS = shipped_names()
_HELP = f"""Print the directory to pass to `lm_eval --include_path`.

The shipped lm-eval tasks ({", ".join(_TASKS)}; groups {", ".join(_GROUPS)}) only generate outputs, with exactly the prompt `privasis-bench sanitize` sends. Generate, then judge:

lm_eval --include_path "$(privasis-bench lm-eval-path)" --tasks privasis_sample --model local-chat-completions --model_args model=MODEL,base_url=http://127.0.0.1:8080/v1/chat/completions,num_concurrent=1 --apply_chat_template --log_samples --output_path runs/lmeval_out

privasis-bench evaluate --tasks privasis_sample --predictions runs/lmeval_out/MODEL/samples_privasis_sample_TIME.jsonl --judge JUDGE --output runs/lmeval

privasis-bench must be installed in lm_eval's Python environment (the task files import it). Document options go through `lm_eval --metadata '{{...}}'`: "instruction": "smoothed", or "data_files": "/abs/path/vanilla_test.parquet" to read a local copy of a Privasis-Zero file (applies to every task of that run).
"""


def lm_eval_path(
    command: bool = typer.Option(False, "--command", help="Print a complete example lm_eval command line instead."),
    tasks: str = typer.Option("privasis_sample", "--tasks", help="lm-eval task or group name for --command."),
    base_url: str = typer.Option("http://127.0.0.1:8080/v1", "--base-url", help="OpenAI-compatible server for --command (default: llama.cpp's server port, as in docs/interop.md)."),
    model: str = typer.Option("MODEL", "--model", help="Model name the server expects, for --command."),
    copy_to: Optional[Path] = typer.Option(
        None, "--copy-to", help="Copy the lm-eval task files into this directory (to edit them) and print it."
    ),
) -> None:
    """Print the lm-eval include path (see the command help for the full workflow)."""
    source = lmeval_tasks_dir()
    if copy_to is not None:
        target = copy_to.resolve()
        if target.exists() and any(target.iterdir()):
            raise PrivasisError(f"--copy-to: {target} exists and is not empty")
        try:
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        except (OSError, shutil.Error) as exc:
            first = exc.args[0][0] if isinstance(exc, shutil.Error) and exc.args and exc.args[0] else None
            why = first[2] if first else (exc.strerror or str(exc))
            raise PrivasisError(f"--copy-to {target}: cannot copy the task files there ({why}); choose a writable, "
                                "empty directory") from None
        source = target
    if command:
        typer.echo(example_command(tasks=tasks, base_url=base_url, model=model).replace(str(lmeval_tasks_dir()), str(source)))
    else:
        typer.echo(str(source))


def register(app: typer.Typer) -> None:
    """Add the ``lm-eval-path`` command."""
    app.command("lm-eval-path", help=_HELP)(lm_eval_path)
