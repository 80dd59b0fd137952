"""Allow ``python -m privasis_bench``."""

from privasis_bench.cli import main

if __name__ == "__main__":
    main()
