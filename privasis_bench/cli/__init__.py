"""The ``privasis-bench`` command line. Each sub-module registers its own commands.

The top layer: it may import every other subpackage, and nothing imports it (except ``__main__``).
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

from privasis_bench import __version__
from privasis_bench.cli.lazy import LazyGroup
from privasis_bench.engine.batch_broker import BatchesDetached
from privasis_bench.errors import PrivasisError

app = typer.Typer(
    cls=LazyGroup,  # commands are listed from a table and imported only when used (fast --help/--version)
    name="privasis-bench",
    help="Evaluate instruction-following text sanitization with the Privasis-Sanitization protocol.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err_console = Console(stderr=True, emoji=False)  # a model named openai:x is not an emoji


#: Set by ``--debug``: unexpected errors show their traceback instead of one line.
_DEBUG = {"on": False}


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"privasis-bench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True, help="Show the version."),
    debug: bool = typer.Option(False, "--debug", help="Show the full traceback of unexpected errors."),
) -> None:
    """Evaluate instruction-following text sanitization."""
    _DEBUG["on"] = debug


def _click_exception_types() -> tuple[type[BaseException], ...]:
    """Click's exception base classes: typer may vendor its own copy of click besides the installed one."""
    types: list[type[BaseException]] = []
    try:
        from typer._click.exceptions import ClickException as VendoredClickException

        types.append(VendoredClickException)
    except ImportError:
        pass
    import click

    types.append(click.exceptions.ClickException)
    return tuple(types)


def _error(message: str, code: int) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def _usage_error(exc: Exception) -> None:
    """A command-line usage error as one line, with where to look for help."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "privasis-bench"
    message = " ".join(str(exc.format_message()).split()) if hasattr(exc, "format_message") else str(exc)
    _error(f"{message} (see '{command} --help')", int(getattr(exc, "exit_code", 2) or 2))


#: Options naming a path to write: an empty value would silently mean the current directory.
_PATH_OPTIONS = ("-o", "--output", "--submissions-dir", "--json", "--cache-dir")


def _empty_path_option(argv: list[str]) -> str | None:
    """The first path option given an empty value (``-o ""`` or ``--output=``), if any."""
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in _PATH_OPTIONS and ((eq and not value.strip()) or (not eq and i + 1 < len(argv) and not argv[i + 1].strip())):
            return name
    return None


def interrupt_signal(signum: int, frame: object) -> None:
    """The handler of SIGTERM and Ctrl-C: stop provider batches from being created or counted (so the ledger's last
    save is exact), then stop the engine loop the main thread runs by cancelling its work, which unwinds and raises
    ``KeyboardInterrupt`` (engine/loops.py); with no loop running, or at a second signal, raise it here and now."""
    from privasis_bench.engine.stats import PAID

    PAID.stop_counting()
    loops = sys.modules.get("privasis_bench.engine.loops")  # not imported yet: no engine loop is running
    if loops is not None and loops.interrupt_running_loop():
        return
    raise KeyboardInterrupt


def _exit_cleanly_on_sigterm() -> None:
    """SIGTERM (a scheduler, `kill`) unwinds like Ctrl-C: finished work and the spend ledger are saved on the way out
    (:func:`interrupt_signal`)."""
    import signal
    import threading

    from privasis_bench.engine.stats import PAID

    PAID.resume_counting()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt_signal)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when Ctrl-C is ignored (background)
            signal.signal(signal.SIGINT, interrupt_signal)


#: What to do about the file-system errors a user can fix, by errno name.
_FS_FIXES = {
    "EROFS": "the file system is read-only: choose a writable path",
    "ENOSPC": "the disk is full: free space or choose a path on another disk",
    "EDQUOT": "the disk quota is used up: free space or choose a path on another disk",
    "ELOOP": "a symbolic link points back to itself: fix or remove the link",
    "EACCES": "permission denied: choose a path you may write, or fix its permissions",
    "EPERM": "operation not permitted: choose another path",
    "ENAMETOOLONG": "the path is too long: choose a shorter one",
    "ENOTDIR": "a part of the path is a file, not a directory: choose another path",
    "EISDIR": "a directory is in the place of a file: move it away or choose another path",
}


def file_system_message(exc: OSError) -> str | None:
    """One line naming the file an OSError is about, what went wrong and what fixes it (None: not a file problem)."""
    import errno

    fix = _FS_FIXES.get(errno.errorcode.get(exc.errno or 0, ""))
    if not exc.filename:
        return f"writing or reading a file failed: {fix} ({exc.strerror})" if fix else None
    where = str(exc.filename) + (f" -> {exc.filename2}" if exc.filename2 else "")
    return f"{where}: {fix or exc.strerror or type(exc).__name__}"


def _unexpected(exc: BaseException, debug: bool) -> None:
    if debug or _DEBUG["on"]:
        raise exc
    detail = " ".join(str(exc).split()) or "no message"
    _error(f"unexpected {type(exc).__name__}: {detail} (re-run with --debug for the traceback)", 1)


def main() -> None:
    """Console-script entry point: every error becomes one line on stderr and a non-zero exit code."""
    _exit_cleanly_on_sigterm()
    empty = _empty_path_option(sys.argv[1:])
    if empty:
        _error(f"{empty} must not be empty (give a directory or file path; '.' for the current directory)", 2)
    click_errors = _click_exception_types()
    debug = "--debug" in sys.argv[1:]
    _DEBUG["on"] = False  # set again by the root callback when --debug is given
    try:
        exit_code = app(standalone_mode=False)
    except PrivasisError as exc:
        _error(str(exc), exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except BatchesDetached as exc:  # --batch-detach: batches submitted, answers collected by the next run
        err_console.print(str(exc), highlight=False, soft_wrap=True)
        sys.exit(0)
    except KeyboardInterrupt:
        err_console.print("interrupted: finished work is saved; re-run the same command to resume")
        sys.exit(130)
    except click_errors as exc:  # usage errors: bad option values, missing arguments, unknown options
        _usage_error(exc)  # type: ignore[arg-type]
    except OSError as exc:
        message = file_system_message(exc)
        if debug or _DEBUG["on"] or message is None:
            _unexpected(exc, debug)
        _error(str(message), 2)
    except RuntimeError as exc:
        if str(exc).startswith("Symlink loop from ") and not (debug or _DEBUG["on"]):  # pathlib's resolve() (Python 3.11)
            _error(f"{str(exc)[len('Symlink loop from '):].strip(chr(39))}: {_FS_FIXES['ELOOP']}", 2)
        _unexpected(exc, debug)
    except Exception as exc:  # noqa: BLE001 - a bug or an unforeseen environment problem
        if debug or _DEBUG["on"]:
            raise
        _unexpected(exc, debug)
    if isinstance(exit_code, int) and exit_code:
        if exit_code == 130:  # typer turns Ctrl-C into this return value
            err_console.print("interrupted: finished work is saved; re-run the same command to resume")
        sys.exit(exit_code)
