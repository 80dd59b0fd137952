"""The Privasis-Sanitization family's declaration (see :mod:`privasis_bench.tasks.family`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from privasis_bench.tasks.family import BoardSpec, CountsColumn, FamilySpec, Grader

BOARD = BoardSpec(
    unit='percentages with 95% bootstrap intervals over records',
    columns=(('full_successful_record', 'Full Successful Record'), ('sanitization_attribute', 'San. Attr'), ('sanitization_attribute_per_record', 'San. Att/Rec'), ('sanitization_record', 'San. Rec'), ('retention_attribute', 'Ret. Attr'), ('retention_attribute_per_record', 'Ret. Att/Rec'), ('retention_record', 'Ret. Rec')),
    rank_by=(('full_successful_record', 'higher'),),
    prose_name='Privasis',
    digits=2,
    tolerance=1e-09,
    records="Records",
    counts=CountsColumn(
        keys=("failed_outputs", "unjudged", "off_label", "cut_model_outputs", "cut_judge_answers"),
        header="Failed / unjudged / off-label / cut out / cut ans",
        label="Failed / unjudged / off-label / cut outputs / cut answers",
        title=("failed model outputs / unjudged records / off-label judge answers / model outputs cut at the token "
               "budget / judge answers cut at the token budget (all zero for a clean entry)")),
    detail="judge {judge}",
    notes=(),
    tie_hint=("Full Successful Record counts a record only when every target is sanitized and every attribute to keep "
              "is retained; where every entry shows the same, the sanitization and retention columns and the chart of "
              "the two show what each entry traded."),
)

FAMILY = FamilySpec(
    name='privasis',
    title='Privasis-Sanitization',
    roles=('judge',),
    schema_versions={'results': 'results-1', 'samples': 'samples-row-1', 'submission': 'submission-1'},
    reference_task='privasis_vanilla',
    board=BOARD,
    scorer='privasis_bench.protocol.scorer:PrivasisScorer',
    verifier="privasis_bench.leaderboard.families.privasis:verify",
    row="privasis_bench.leaderboard.families.privasis:board_row",
    content="privasis_bench.leaderboard.scored_content:privasis_content",
    viewer="privasis_bench.leaderboard.viewer:write_viewer",
    rejudge='privasis_bench.leaderboard.families.privasis:rejudge',
    report='privasis_bench.protocol.commands:print_report',
    record_outcome="privasis_bench.protocol.family:record_outcome",
    graders="privasis_bench.protocol.family:graders",
    overall='privasis_bench.leaderboard.families.privasis:overall_row',
    sections="privasis_bench.leaderboard.families.privasis_board:sections",
)


def record_outcome(row: dict) -> tuple[float, bool] | None:
    """A judged record's outcome: 1.0 when every target is sanitized and every keep attribute retained, else 0.0."""
    from privasis_bench.protocol.metrics import is_full_success
    from privasis_bench.protocol.verdicts import RecordVerdict

    if row.get("status") != "judged":
        return None
    success = is_full_success(RecordVerdict.from_dict(row))
    return (1.0 if success else 0.0), success


def graders(results: Mapping[str, Any]) -> list[Grader]:
    """The judge that graded a run, with the prompt templates it recorded (none for a run scored without a judge)."""
    judge = results.get("judge")
    if not isinstance(judge, Mapping) or not judge.get("key"):
        return []
    sources = judge.get("prompt_sources") if isinstance(judge.get("prompt_sources"), Mapping) else {}
    hashes = judge.get("prompt_hashes") if isinstance(judge.get("prompt_hashes"), Mapping) else {}
    templates = {str(name): (sources.get(name), str(sha)) for name, sha in sorted(hashes.items())}
    return [Grader("judge", judge, judge.get("temperature"), templates,
                   {"parse_mode": judge.get("parse_mode"), "prompt_hashes": dict(hashes)})]
