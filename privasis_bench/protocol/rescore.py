"""The Privasis family's side of ``rescore`` and ``compare``, bound to
:class:`~privasis_bench.protocol.scorer.PrivasisScorer`: metrics from samples rows, and each row's verdicts re-derived
from its recorded output and judge answers (no model call)."""

from __future__ import annotations

from typing import Any

from privasis_bench.protocol.metrics import compute_metrics, paired_bootstrap, scored
from privasis_bench.protocol.output_check import check_output, output_rule
from privasis_bench.protocol.presets import preset_problems, withhold_inexact_metrics
from privasis_bench.protocol.recount import RowCounts
from privasis_bench.protocol.rederive import empty_output_rule, failed_output_rule, judge_enabled, rederive_row
from privasis_bench.protocol.row_checks import answer_cleaning_problems, cut_flag_problems
from privasis_bench.protocol.tallies import MetricTallies
from privasis_bench.protocol.verdicts import SCORED_STATUSES, verdicts_from_rows
from privasis_bench.tasks.scoring import RowChecks


def rescore_rows(rows: list[dict[str, Any]], stored: dict[str, Any], *, bootstrap_samples: int, seed: int,
                 confidence: float) -> dict[str, Any]:
    """The metrics again from the scored records' verdicts (``stored``: the earlier metrics, for their list limit)."""
    verdicts = MetricTallies()
    for rv in verdicts_from_rows(rows):
        if rv.status in SCORED_STATUSES:
            verdicts.add(rv)
    return compute_metrics(verdicts, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence,
                           top_failed=stored.get("top_failed_limit", 20))


def row_checks(results: dict[str, Any], rows: list[dict[str, Any]], metrics: dict[str, Any]) -> RowChecks:
    """Every row re-derived (verdicts, output, cut flags, judge answers) and recounted against ``results``; the
    metrics with the headline withheld where the recorded preset says so (as the run did)."""
    parse_mode, enabled = results.get("parse_mode") or "official", judge_enabled(results)
    empty_rule, failed_rule = empty_output_rule(results), failed_output_rule(results)
    rule = output_rule(results)  # testee template cue and predictions post-processing, as results.json records them
    contradictions: list[Any] = []
    problems: list[str] = []
    recount = RowCounts()
    for row in rows:
        recount.add(row)
        contradictions += rederive_row(row, parse_mode=parse_mode, judge_enabled=enabled, empty_outputs=empty_rule,
                                       failed_outputs=failed_rule)
        if (bad_output := check_output(row, rule)) is not None:
            contradictions.append(bad_output)
        problems += cut_flag_problems([row]) + answer_cleaning_problems([row])  # what `verify` checks too
    finished = {**results, "metrics": metrics}
    withhold_inexact_metrics(finished)
    return RowChecks(contradictions, problems, recount.differences(results, metrics["scored_records"]),
                     preset_problems(results), finished["metrics"])


def compare_rows(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], *, samples: int, seed: int,
                 confidence: float) -> dict[str, Any]:
    """Paired bootstrap of two runs' scored records (``privasis-bench compare``)."""
    return paired_bootstrap(scored(verdicts_from_rows(rows_a)), scored(verdicts_from_rows(rows_b)), samples=samples, seed=seed,
                            confidence=confidence)
