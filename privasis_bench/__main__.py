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

    cli_main()


if __name__ == "__main__":
    main()
