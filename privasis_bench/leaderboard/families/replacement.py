"""The replacement-quality family (``scorer: tab_replacement``) on the shared board: recompute an entry's TPS, TRIR
and NMI, and TAB's detection measures beside them, from its outputs and the data the verifier holds.

Documents, ids, spans and what is scored are checked as for TAB (:mod:`.spans`). The verifier scores with the shipped
task's own estimators (information content, similarity model, background, attacker, clustering), loaded once per task
and process (:func:`prepared_scorer`): ``results.json``'s ``scorer`` section must be what they describe (package
versions aside) and ``metrics.estimator_key`` theirs (numbers under different keys are never ranked together). Every
row's pairs, information content, TPS, attacker guess and TAB counts, and every pooled measure with its interval, are
recomputed and compared; model-derived numbers within the family's ``tolerance`` agree (float32 inference differs in
its last bits between CPUs).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from privasis_bench.data.system_output import SystemOutput
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.families.spans import SpanRun, derived_spans, span_row, span_verify
from privasis_bench.leaderboard.family_api import EntryInput, FamilyVerdict, leaf_differences, short
from privasis_bench.replacement.family import BOARD
from privasis_bench.tab.shown import reported_spans
from privasis_bench.tasks.config import TaskConfig

TOLERANCE = BOARD.tolerance
#: Decimals of a percentage the board data keeps: no finer than the tolerance (1e-6 of a fraction is 1e-4 percent),
#: so a number recomputed on another CPU (float32 embeddings differ in their last bits) shows the same.
DECIMALS = round(-math.log10(TOLERANCE * 100))

#: Fields of ``results.json``'s ``scorer`` section that name a package version, not an estimator.
_VERSION_KEYS = ("version", "package_version", "spacy_version", "spacy_pipeline_version", "transformers_version",
                 "sentence_transformers_version", "torch_version")


_PREPARED: dict[tuple[str, str, int | None], Any] = {}


def prepared_scorer(task: TaskConfig, limit: int | None) -> Any:
    """The task's replacement scorer with its documents read, models loaded and attacker fitted (once per process
    and task configuration)."""
    from privasis_bench.replacement.scorer import ReplacementScorer

    key = (task.task, task.config_hash(), limit)
    if key not in _PREPARED:
        scorer = ReplacementScorer(task)
        scorer.records(limit=limit)
        _PREPARED.clear()  # one task's models at a time
        _PREPARED[key] = scorer
    return _PREPARED[key]


def without_versions(data: Any) -> Any:
    """``data`` without the package-version fields (an estimator is its name and settings, not its build)."""
    if isinstance(data, Mapping):
        return {k: without_versions(v) for k, v in data.items() if k not in _VERSION_KEYS}
    if isinstance(data, list):
        return [without_versions(v) for v in data]
    return data


def _outputs(docs: Mapping[str, Any], by_id: Mapping[str, dict[str, Any]], masker: bool, failed_as_empty: bool
             ) -> tuple[dict[str, SystemOutput], list[str]]:
    """What the system produced per document, as the pipeline handed it to the scorer (reported spans only from a
    span masker, and only when they describe its output)."""
    outputs, problems = {}, []
    for doc_id, doc in docs.items():
        row = by_id[doc_id]
        _, bad = derived_spans(doc, row, masker, failed_as_empty)
        if bad:
            problems.append(f"document {doc_id}: {bad}")
            continue
        text = row.get("output") if isinstance(row.get("output"), str) else None
        error = row.get("error") if isinstance(row.get("error"), str) else None
        spans = reported_spans(row) if masker and text is not None and error is None else None
        outputs[doc_id] = SystemOutput(text=text, spans=spans, error=error)
    return outputs, problems


def row_differences(submitted: Mapping[str, dict[str, Any]], derived: list[dict[str, Any]], limit: int = 20) -> list[str]:
    """Every field of a submitted row that differs from the row the verifier derives (at most ``limit`` lines)."""
    problems: list[str] = []
    for row in derived:
        got = submitted.get(row["id"]) or {}
        for key in sorted(row):
            first = next(leaf_differences(got.get(key), row[key], key, TOLERANCE), None)
            if first:
                problems.append(f"document {row['id']}: {first[0]} is {short(first[1])}, but its output gives "
                                f"{short(first[2])} (re-derived from the output, the document and the task's estimators)")
        if len(problems) >= limit:
            return problems[:limit] + ["(more row differences not shown)"]
    return problems


def verify(entry: EntryInput) -> FamilyVerdict:
    """Recompute one replacement entry (see the module docstring); its estimator key is a board fact."""
    from privasis_bench.replacement.summary import summarize_rows

    verdict = span_verify(entry, summarize_rows, _score)
    if verdict.metrics is None:
        return verdict
    return dataclasses.replace(verdict, facts={**verdict.facts, "estimator_key": verdict.metrics.get("estimator_key")})


def _score(entry: EntryInput, run: SpanRun) -> tuple[list[str], dict[str, Any] | None, list[str]]:
    task, limit = entry.task, (entry.results.get("dataset") or {}).get("limit")
    outputs, problems = _outputs(run.docs, run.by_id, run.masker, run.failed_as_empty)
    if problems:
        return problems, None, []
    try:
        scorer = prepared_scorer(task, limit if isinstance(limit, int) and limit > 0 else None)
    except PrivasisError as exc:
        return [f"task {task.task!r}: cannot load its estimators or background here ({exc})"], None, []
    metrics, derived = scorer.score(outputs, failed_as_empty=run.failed_as_empty, **run.settings)
    problems += [f"results.json {path} is {short(a)} but the task's estimators, as the verifier loads them, give "
                 f"{short(b)} (an entry records the estimators that made its numbers)"
                 for path, a, b in leaf_differences(without_versions(entry.results.get("scorer")),
                                                    without_versions(scorer.describe()), "scorer", TOLERANCE)]
    problems += row_differences(run.by_id, derived)
    return problems, metrics, [r["id"] for r in derived if r.get("scored")]


def board_row(v: Any, task: str, viewer: str | None) -> dict[str, Any]:
    """The board row of one verified replacement entry: the shared span-scored fields, then TRIR, TPS, NMI and TAB's
    measures recomputed, in percent (with their intervals; NMI has none), and the estimator key that groups rows."""
    m, scorer = v.recomputed, v.results.get("scorer") or {}
    row = span_row(v, task, viewer, BOARD.columns, m, scale=100, decimals=DECIMALS)
    trir = scorer.get("trir") if isinstance(scorer.get("trir"), dict) else {}
    row.update(estimator_key=str(v.facts().get("estimator_key") or m.get("estimator_key")),
               estimators=estimator_summary(scorer), trir_attacker=trir.get("attacker"))
    return row


def estimator_summary(scorer: Mapping[str, Any]) -> str:
    """One line naming what gave the numbers: information content, similarity model, attacker, NMI embeddings."""
    def part(section: str, key: str) -> str:
        value = scorer.get(section)
        return str(value.get(key)) if isinstance(value, Mapping) and value.get(key) is not None else "?"

    trir = scorer.get("trir")
    attack = f"{part('trir', 'attacker')} attack" if isinstance(trir, Mapping) else "no attack (no background)"
    return (f"IC {part('information_content', 'name')} · similarity {part('similarity', 'model')} · {attack} · "
            f"NMI {part('nmi', 'model')} K={part('nmi', 'k')}")
