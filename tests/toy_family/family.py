"""The toy family's declaration: one role (``attacker``), its own scorer, tasks, schemas, board code and a command.

Registered with one line, ``FAMILIES.register("toy", "tests.toy_family.family:FAMILY")``; nothing generic names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from privasis_bench.tasks.family import BoardSpec, FamilyCommand, FamilySpec, Grader

BOARD = BoardSpec(
    unit="percent of notes whose city the attacker did not name from the rewrite",
    columns=(("protected", "Protected"),),
    rank_by=(("protected", "higher"),),
    digits=1,
    records="Notes",
    detail="attacker guesses",
)

FAMILY = FamilySpec(
    name="toy",
    title="Toy attribute inference",
    roles=("attacker",),
    schema_versions={"results": "toy-results-1", "samples": "toy-samples-row-1",
                     "submission": "privasis_bench.results:schemas/tab-submission-1.schema.json"},
    reference_task="toy_cities",
    board=BOARD,
    scorer="tests.toy_family.scorer:ToyScorer",
    verifier="tests.toy_family.board:verify",
    row="tests.toy_family.board:board_row",
    content="tests.toy_family.board:content",
    viewer="tests.toy_family.board:write_viewer",
    rejudge="tests.toy_family.board:rejudge",
    rejudge_kinds=("attacker",),
    tasks_dir="tests.toy_family:tasks",
    graders="tests.toy_family.family:graders",
    commands=(FamilyCommand("toy-guesses", "tests.toy_family.commands:toy_guesses",
                            "Print the attacker's guess for each note of a toy run."),),
    extra={"schema_dir": "tests.toy_family:schemas"},
)

#: The toy's one task (shipped by the family: ``--tasks toy_cities`` once the family is registered).
TASK = "toy_cities"


def graders(results: Mapping[str, Any]) -> list[Grader]:
    """The attacker, asked with the family's shipped question template (for exports naming who graded a run)."""
    attacker = (results.get("roles") or {}).get("attacker")
    sha256 = (results.get("scorer") or {}).get("template")
    if not isinstance(attacker, Mapping) or not sha256:
        return []
    return [Grader("attacker", attacker, 0.0, {"attack": ("tests.toy_family:tasks/attack.txt", str(sha256))})]
