"""Allow ``python -m privasis_bench``; also the console script's entry point.

``--version`` alone is answered here, before the command line (typer, rich) is imported, so it stays fast on a
busy machine; everything else goes to :func:`privasis_bench.cli.main`.
"""

import sys


def main() -> None:
    """Entry point of ``privasis-bench``."""
    if sys.argv[1:] == ["--version"]:
        from privasis_bench import __version__

        print(f"privasis-bench {__version__}")
        return
    from privasis_bench.cli import main as cli_main

    try:
        cli_main()
    except SystemExit as exc:
        if exc.code == 130:  # interrupted: finished work is saved by now
            _end_interrupted()
        raise


def _end_interrupted() -> None:
    """Ctrl-C / SIGTERM, after the journal, the cache and the spend ledger were saved: a worker thread still inside
    a call it cannot leave (an in-process model reading a long prompt, which stops only at its next token) would hold
    the interpreter's exit until it finishes; the process ends now instead."""
    import os
    import threading

    busy = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if busy:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)


if __name__ == "__main__":
    main()
