"""Run the console-script entry point in the test process and capture what a user would see."""

from __future__ import annotations

import sys


def run_main(argv: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """``privasis-bench argv`` through :func:`privasis_bench.cli.main`: (exit status, stdout, stderr)."""
    from privasis_bench.cli import main

    monkeypatch.setattr(sys, "argv", ["privasis-bench", *argv])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


#: Give a child command this in its environment so that :func:`ended` can show where it hangs.
DUMP_STACKS_ENV = {"PYTHONFAULTHANDLER": "1"}


def ended(proc, timeout: float, what: str) -> tuple[str, str]:
    """Wait up to ``timeout`` s for a child command to end: (stdout, stderr). A child still running then fails the
    test with every thread's stack (SIGABRT makes a child started with :data:`DUMP_STACKS_ENV` print them) and
    what it wrote, so a hang seen once in CI says where it was."""
    import signal
    import subprocess

    import pytest

    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    proc.send_signal(signal.SIGABRT)
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    pytest.fail(f"{what}: the command was still running after {timeout:.0f} s (exit {proc.returncode} after "
                f"SIGABRT); its stacks and output:\n--- stderr ---\n{err}\n--- stdout ---\n{out}", pytrace=False)
