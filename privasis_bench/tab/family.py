"""The TAB family's declaration (see :mod:`privasis_bench.tasks.family`)."""

from __future__ import annotations

from privasis_bench.tasks.family import BoardSpec, FamilyCommand, FamilySpec

BOARD = BoardSpec(
    unit="fractions (TAB's measures, micro-averaged over annotators) with 95% bootstrap intervals over documents",
    columns=(('token_recall', 'Token recall'), ('mention_recall', 'Mention recall'), ('recall_direct_entities', 'Entity recall (direct)'), ('recall_quasi_entities', 'Entity recall (quasi)'), ('token_precision', 'Token precision'), ('mention_precision', 'Mention precision'), ('token_f1', 'Token F1')),
    rank_by=(('token_recall', 'higher'),),
    digits=3,
    tolerance=1e-09,
)

FAMILY = FamilySpec(
    name='tab',
    title='TAB',
    roles=(),
    schema_versions={'results': 'tab-results-1', 'samples': 'tab-samples-row-1', 'submission': 'tab-submission-1'},
    reference_task='tab_test',
    board=BOARD,
    scorer='privasis_bench.tab.scorer:TabScorer',
    verifier="privasis_bench.leaderboard.families.tab:verify",
    row="privasis_bench.leaderboard.families.spans:board_row",
    content="privasis_bench.leaderboard.families.spans:span_content",
    viewer="privasis_bench.leaderboard.families.span_viewer:write_span_viewer",
    rejudge=None,
    record_outcome="privasis_bench.tab.family:record_outcome",
    overall=None,
    commands=(FamilyCommand("export-tab-masks", "privasis_bench.tab.commands:export_tab_masks",
                            "Write a TAB run's masked spans as TAB's masked-output file, for its official evaluation.py."),),
    empty_output="empty outputs (for TAB: an empty rewrite masks the whole document)",
)


def record_outcome(row: dict) -> tuple[float, bool] | None:
    """A scored document's token recall; a success when every identifier's tokens were masked."""
    measures = row.get("measures") if isinstance(row.get("measures"), dict) else {}
    recall = measures.get("token_recall")
    if not row.get("scored") or not isinstance(recall, (int, float)):
        return None
    return float(recall), recall >= 1.0
