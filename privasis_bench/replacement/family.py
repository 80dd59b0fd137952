"""The Replacement quality family's declaration (see :mod:`privasis_bench.tasks.family`)."""

from __future__ import annotations

from privasis_bench.tasks.family import BoardSpec, FamilyCommand, FamilySpec

BOARD = BoardSpec(
    unit="percentages over documents: the replacement measures of the inference-attack-guided sanitization paper (TRIR with a 95% bootstrap interval, TPS with one, NMI without) beside TAB's detection measures; compared only among entries scored with the same estimators",
    columns=(('trir', 'TRIR ↓'), ('tps', 'TPS'), ('nmi', 'NMI'), ('token_recall', 'TAB token recall'), ('recall_direct_entities', 'TAB entity recall (direct)'), ('token_precision', 'TAB token precision')),
    rank_by=(('trir', 'lower'), ('tps', 'higher')),
    prose_name='replacement quality',
    digits=1,
    tolerance=1e-06,
    group_keys=('estimator_key',),
    frontier=True,
)

FAMILY = FamilySpec(
    name='tab_replacement',
    title='Replacement quality',
    roles=(),
    schema_versions={'results': 'replacement-results-1', 'samples': 'replacement-samples-row-1', 'submission': 'tab-submission-1'},
    reference_task='tab_replacement_sample',
    board=BOARD,
    scorer='privasis_bench.replacement.scorer:ReplacementScorer',
    verifier="privasis_bench.leaderboard.families.replacement:verify",
    row="privasis_bench.leaderboard.families.replacement:board_row",
    content="privasis_bench.leaderboard.families.spans:span_content",
    viewer="privasis_bench.leaderboard.families.span_viewer:write_span_viewer",
    rejudge=None,
    record_outcome="privasis_bench.replacement.family:record_outcome",
    overall=None,
    sections="privasis_bench.leaderboard.families.replacement_board:sections",
    commands=(FamilyCommand("tab-background", "privasis_bench.replacement.commands:tab_background",
                            "Build TRIR background knowledge from local TAB-schema files (the paper's recipe: a random "
                            "superset twice the protected set)."),
              FamilyCommand("replacement-chart", "privasis_bench.replacement.commands:replacement_chart",
                            "Draw TRIR against TPS for tab_replacement runs as an SVG.")),
)


def record_outcome(row: dict) -> tuple[float, bool] | None:
    """A scored document's protection: 1.0 (a success) when the attacker did not re-identify its individual."""
    if not row.get("scored") or not isinstance(row.get("reidentified"), bool):
        return None
    return (0.0, False) if row["reidentified"] else (1.0, True)
