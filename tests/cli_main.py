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
