"""The commands of one shell block of README.md or docs/, for tests that run a documented block.

A block is found by its page and the start of its first line (as in ``tests/docs_examples/test_doc_examples.py`` BLOCKS), so a
test stops matching, and fails, when the block it runs is edited away. Backslash continuations are joined; comment
lines and trailing ``# ...`` comments are dropped.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"```(?:bash|sh|shell|console)\n(.*?)```", re.S)


def block_commands(page: str, first: str) -> list[str]:
    """The command lines of the shell block of ``page`` whose first line starts with ``first``."""
    for block in _BLOCK.findall((REPO / page).read_text(encoding="utf-8")):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if lines and lines[0].strip().startswith(first):
            joined = [" ".join(ln.split()) for ln in block.replace("\\\n", " ").splitlines()]
            commands = [ln.split(" #", 1)[0].strip() for ln in joined if ln and not ln.startswith("#")]
            return [c for c in commands if c]
    raise AssertionError(f"{page}: no shell block starts with {first!r}")
