"""The toy family's declaration: one role (``attacker``), its own scorer, schemas and board code (``board``)."""

from __future__ import annotations

from pathlib import Path

from privasis_bench.tasks.family import BoardSpec, FamilySpec

BOARD = BoardSpec(
    unit="fractions of records whose city the attacker did not guess",
    columns=(("protected", "Protected"),),
    rank_by=(("protected", "higher"),),
    digits=3,
)

FAMILY = FamilySpec(
    name="toy",
    title="Toy attribute inference",
    roles=("attacker",),
    schema_versions={"results": "toy-results-1", "samples": "toy-samples-row-1", "submission": "tab-submission-1"},
    reference_task="toy_cities",
    board=BOARD,
    scorer="tests.toy_family.scorer:ToyScorer",
    verifier="tests.toy_family.board:verify",
    row="tests.toy_family.board:board_row",
    content="tests.toy_family.board:content",
    viewer="tests.toy_family.board:write_viewer",
    rejudge="tests.toy_family.board:rejudge",
    extra={"schema_dir": str(Path(__file__).resolve().parent / "schemas")},
)

#: The toy task's file (``--tasks`` takes a YAML path).
TASK_FILE = Path(__file__).resolve().parent / "toy_cities.yaml"
