"""Commands loaded when used: ``--help`` and ``--version`` import no command module, ``run`` only its own.

Each command module keeps its Typer definitions and ``register(app)``; :data:`COMMANDS` names, for every command,
the module that registers it and the one line ``--help`` shows. :class:`LazyGroup` lists the commands from that
table and builds a command from its module only when it is invoked or its own help is asked for, so heavy
libraries (pandas, datasets, the model SDKs) load only inside the commands that need them. A task family adds its
own commands in its declaration (``FamilySpec.commands``): they are listed after the harness's and loaded the same way.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

#: command name -> (module under privasis_bench.cli, the line `privasis-bench --help` shows), in help order.
COMMANDS: dict[str, tuple[str, str]] = {
    "sanitize": ("sanitize_cmds", "Run a model over each task's records; re-running the same command resumes where it stopped."),
    "run": ("eval_cmds", "Sanitize with the model, judge, score and write results; re-running resumes what is missing."),
    "evaluate": ("eval_cmds", "Judge and score saved model outputs (no call to the model under test)."),
    "judge": ("eval_cmds", "Alias of evaluate: judge and score saved outputs."),
    "rescore": ("rescore_cmds", "Recompute every metric from samples.jsonl (no model call), check it against results.json, "
                             "and re-derive every verdict."),
    "compare": ("rescore_cmds", "Paired bootstrap comparison of two runs on their common records, per common task."),
    "agreement": ("extras_cmds", "Judge agreement of two runs: per-decision agreement and Cohen's kappa, metric deltas, "
                                 "most-disagreed attributes."),
    "linkage": ("extras_cmds", "Re-identification linkage: BM25 over the run's outputs from k known facts; writes "
                               "<task>/linkage.json."),
    "near-verbatim": ("extras_cmds", "Near-verbatim leaks: targets carried in a slightly altered form; writes "
                                     "<task>/near_verbatim.json."),
    "export": ("export_cmds", "Export finished runs as flat tables (csv, jsonl) or as the Hub's eval-results files."),
    "lm-eval-path": ("lmeval_cmds", "Print the directory to pass to `lm_eval --include_path`."),
    "generate": ("recipe_cmds", "Synthesize annotated records (profile, type, context, format, draft, refinement, "
                                "attributes, groups)."),
    "build-corpus": ("recipe_cmds", "Build Privasis-Zero benchmark rows (vanilla / hard) from annotated records with the "
                                    "decomposition pipeline."),
    "export-sft": ("training_cmds", "Export chat-format SFT data whose user turn is exactly the prompt `sanitize` sends."),
    "train": ("training_cmds", "Fine-tune a cleaner with TRL's SFT trainer (pip extra: train) and write a model card."),
    "submit": ("leaderboard_cmds", "Copy a finished run into submissions/ with its provenance (submission.json)."),
    "view": ("leaderboard_cmds", "Write a static page per task to browse a run record by record (view.html)."),
    "tasks": ("task_cmds", "List and inspect task definitions."),
    "data": ("data_cmds", "Inspect benchmark data."),
    "models": ("model_cmds", "Model providers (adapters): built-in and installed plugins."),
    "leaderboard": ("leaderboard_cmds", "Verify submissions and build the leaderboard."),
}


def family_commands() -> dict[str, tuple[str, str]]:
    """The commands registered task families add: name -> (``"module:function"``, the line ``--help`` shows).

    A family that cannot be loaded adds none (``--help`` still works); a name the harness already uses is skipped."""
    from privasis_bench.tasks.family import FAMILIES

    found: dict[str, tuple[str, str]] = {}
    for family in FAMILIES.names():
        try:
            commands = FAMILIES.get(family).commands
        except (ImportError, TypeError):
            continue
        for command in commands:
            if command.name not in COMMANDS:
                found.setdefault(command.name, (command.target, command.summary))
    return found


def all_commands() -> dict[str, tuple[str, str]]:
    """Every command in ``--help`` order: the harness's (:data:`COMMANDS`), then the families' own."""
    return {**COMMANDS, **family_commands()}


@lru_cache(maxsize=None)
def load_command(name: str) -> Any:
    """The real click command ``name``: its module's ``register`` (or a family's Typer function, ``"module:function"``)
    run on a scratch Typer app, importing only that module."""
    from privasis_bench.registry import import_target

    where, _ = all_commands()[name]
    scratch = typer.Typer(add_completion=False)
    if ":" in where:
        scratch.command(name)(import_target(where))
    else:
        importlib.import_module(f"privasis_bench.cli.{where}").register(scratch)
    return typer.main.get_group(scratch).commands[name]


class LazyCommand(TyperCommand):
    """A stand-in that knows its name and one-line help, and hands everything else to the real command."""

    def __init__(self, name: str, short: str) -> None:
        super().__init__(name=name, help=short, short_help=short, callback=None, params=[])

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        return load_command(self.name).make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:  # only reached if a context was made from the stand-in itself
        return load_command(self.name).invoke(ctx)


class LazyGroup(TyperGroup):
    """The root group: commands listed from :func:`all_commands`, each loaded when it runs."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(all_commands())

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        known = all_commands()
        if cmd_name not in known:
            return None
        return LazyCommand(cmd_name, known[cmd_name][1])
