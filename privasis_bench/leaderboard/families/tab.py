"""The TAB family on the board: recompute a TAB entry from its outputs and the documents the verifier holds.

Nothing a TAB row derives is taken as given (see :mod:`.spans` for spans, scored documents and partial runs):
counts, missed mentions and per-document measures are recounted from the spans against the shipped gold with the
task's own spaCy pipeline; the pooled measures and their bootstrap intervals are recomputed with the task's settings,
and the board shows and ranks those recomputed numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from privasis_bench.leaderboard.families.span_viewer import write_span_viewer
from privasis_bench.leaderboard.families.spans import (
    SELF_REPORTED_FACTS,
    check_counts,
    derived_spans,
    index_rows,
    span_content,
    span_masker,
    span_row,
    span_verdict,
    tagger_claim_problems,
)
from privasis_bench.leaderboard.family_api import EntryInput, FamilyVerdict
from privasis_bench.tab.family import BOARD
from privasis_bench.tab.metrics import pooled, tally_document
from privasis_bench.tab.scorer import rescore_rows, summarize
from privasis_bench.tab.tokens import spacy_ignore_map

content = span_content


def verify(entry: EntryInput) -> FamilyVerdict:
    """Recompute one TAB entry (see the module docstring)."""
    return span_verdict(entry, *_recompute(entry))


def _recompute(entry: EntryInput) -> tuple[list[str], dict[str, Any] | None, dict[str, Any], int | None]:
    res, task, rows = entry.results, entry.task, entry.rows
    boot = res["metrics"]["bootstrap"]
    if entry.custom:  # documents of the user's own: the verifier holds no gold; numbers are re-pooled from the rows
        return [], rescore_rows(rows, res["metrics"], bootstrap_samples=boot["samples"], seed=boot["seed"],
                                confidence=boot["confidence"]), dict(SELF_REPORTED_FACTS), None
    indexed = index_rows(task, res, rows)
    if isinstance(indexed, list):
        return indexed, None, {}, None
    every, docs, by_id = indexed
    problems: list[str] = []
    masker = span_masker(res)
    failed_as_empty = (res.get("checks") or {}).get("failed_outputs") == "scored_as_empty"
    ignore = spacy_ignore_map(task.scorer_args.get("spacy_model"))
    problems += tagger_claim_problems(res, ignore.description)
    tallies, failed, scored_ids = [], 0, []
    for doc_id, doc in docs.items():
        row = by_id[doc_id]
        spans, bad = derived_spans(doc, row, masker, failed_as_empty)
        failed += not (isinstance(row.get("output"), str) and row.get("error") is None)
        if bad:
            problems.append(f"document {doc_id}: {bad}")
            continue
        if bool(row.get("scored")) != (spans is not None):
            problems.append(f"document {doc_id}: scored is {row.get('scored')!r} but its output "
                            f"{'can' if spans is not None else 'cannot'} be scored (the verifier decides, not the row)")
        if spans is None:
            continue
        tally = tally_document(doc, spans, ignore)
        tallies.append(tally)
        scored_ids.append(doc_id)
        problems += _row_differences(doc_id, row, spans, tally)
    metrics = summarize(tallies, bootstrap_samples=boot["samples"], seed=boot["seed"], confidence=boot["confidence"])
    metrics["documents"] = len(docs)
    metrics["annotators"] = sorted({a for d in docs.values() for a in d.annotators})
    counted, facts = check_counts(res, every=len(every), loaded=len(docs), scored_ids=scored_ids, failed=failed,
                                  failed_as_empty=failed_as_empty, masker=masker)
    return problems + counted, metrics, facts, len(every)


def _row_differences(doc_id: str, row: Mapping[str, Any], spans: list, tally: Any) -> list[str]:
    """Every derived field of a row that is not what the verifier derives (the viewer shows these fields)."""
    want = {"masked_spans": [list(s) for s in spans], "counts": {k: v for k, v in tally.counts.items() if v},
            "by_type": {k: list(v) for k, v in tally.by_type.items()}, "missed": tally.missed,
            "measures": _rounded(pooled(tally))}
    got = {"masked_spans": row.get("masked_spans"),
           "counts": {k: v for k, v in (row.get("counts") or {}).items() if v} if isinstance(row.get("counts"), dict)
           else row.get("counts"), "by_type": row.get("by_type"), "missed": row.get("missed"),
           "measures": row.get("measures")}
    return [f"document {doc_id}: {k} is not what its output gives (re-derived from the output and the document)"
            for k in want if got[k] != want[k]]


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: ({k2: round(v2, 3) for k2, v2 in v.items()} if isinstance(v, dict) else round(v, 3))
            for k, v in values.items()}


def board_row(v: Any, task: str, viewer: str | None) -> dict[str, Any]:
    """The board row of one verified TAB entry: the shared fields plus TAB's recomputed columns and intervals."""
    return span_row(v, task, viewer, BOARD.columns, v.recomputed)


def write_viewer(task_dir: Path, out: Path, title: str | None = None, back: str | None = None,
                 metrics: dict[str, Any] | None = None) -> Path:
    """The per-document page of one TAB task folder (masked and missed spans)."""
    return write_span_viewer(task_dir, out, title=title, back=back, metrics=metrics)
