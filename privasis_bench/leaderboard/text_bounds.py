"""Length bounds on the free text a submission shows: names, labels, owner, and every other string it records.

A submitter writes these; the board prints them. Bounded, they cannot make a page or a table unusable, nor cost
the verifier or a reader more than a glance. One problem line per field over its bound, naming the file and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

#: Longest text per field the board shows (characters).
BOUNDS = {"name": 100, "owner": 64, "label": 200, "model.label": 200, "judge.label": 200}
#: Longest any other string in submission.json or results.json may be.
MAX_STRING = 2000


def strings(data: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every (dotted path, string) of a parsed JSON value (iterative; list items as ``path[i]``)."""
    stack = [(path, data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, str):
            yield where, node
        elif isinstance(node, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(node))


def free_text_problems(folder: Path, submission: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """Every string of submission.json and results.json over its bound (see :data:`BOUNDS`, :data:`MAX_STRING`)."""
    problems = []
    for name, data in (("submission.json", submission), ("results.json", results)):
        for where, text in strings(data):
            limit = BOUNDS.get(where, MAX_STRING)
            if len(text) > limit:
                problems.append(f"{folder / name}: {where} has {len(text)} characters, more than the {limit} the board "
                                "accepts for it")
    return sorted(problems)[:20]
