"""The ``privasis-bench`` command line. Each sub-module registers its own commands.

The top layer: it may import every other subpackage, and nothing imports it (except ``__main__``).
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench import __version__
from privasis_bench.errors import PrivasisError

app = typer.Typer(
    name="privasis-bench",
    help="Evaluate instruction-following text sanitization with the Privasis-Sanitization protocol.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err_console = Console(stderr=True)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"privasis-bench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True, help="Show the version."),
) -> None:
    """Evaluate instruction-following text sanitization."""


def _register_commands() -> None:
    # Imported here so `import privasis_bench.cli` stays cheap and order is explicit.
    from privasis_bench.cli import (data_cmds, eval_cmds, lmeval_cmds, model_cmds, recipe_cmds, sanitize_cmds,
                                    task_cmds)

    for module in (task_cmds, data_cmds, model_cmds, sanitize_cmds, eval_cmds, lmeval_cmds, recipe_cmds):
        module.register(app)


_register_commands()


def main() -> None:
    """Console-script entry point: user errors become one line on stderr and exit code 2."""
    try:
        exit_code = app(standalone_mode=False)
    except PrivasisError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        err_console.print("interrupted: finished work is saved; re-run the same command to resume")
        sys.exit(130)
    except Exception as exc:  # click usage errors and friends
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
    if isinstance(exit_code, int) and exit_code:
        if exit_code == 130:  # typer turns Ctrl-C into this return value
            err_console.print("interrupted: finished work is saved; re-run the same command to resume")
        sys.exit(exit_code)
