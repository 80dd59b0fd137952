"""The TAB family on the board: recompute a TAB entry from its outputs and the documents the verifier holds.

Nothing a TAB row derives is taken as given (see :mod:`.spans` for spans, scored documents and partial runs):
counts, missed mentions and per-document measures are recounted from the spans against the shipped gold with the
task's own spaCy pipeline; the pooled measures and their bootstrap intervals are recomputed with the task's settings,
and the board shows and ranks those recomputed numbers.
"""

from __future__ import annotations

from typing import Any, Mapping

from privasis_bench.leaderboard.families.spans import (
    SpanRun,
    derived_spans,
    span_verify,
    tagger_claim_problems,
)
from privasis_bench.leaderboard.family_api import EntryInput, FamilyVerdict
from privasis_bench.tab.metrics import pooled, tally_document
from privasis_bench.tab.scorer import rescore_rows, summarize
from privasis_bench.tab.tokens import spacy_ignore_map


def verify(entry: EntryInput) -> FamilyVerdict:
    """Recompute one TAB entry (see the module docstring)."""
    return span_verify(entry, rescore_rows, _score)


def _score(entry: EntryInput, run: SpanRun) -> tuple[list[str], dict[str, Any], list[str]]:
    ignore = spacy_ignore_map(entry.task.scorer_args.get("spacy_model"))
    problems = tagger_claim_problems(entry.results, ignore.description)
    tallies, scored_ids = [], []
    for doc_id, doc in run.docs.items():
        row = run.by_id[doc_id]
        spans, bad = derived_spans(doc, row, run.masker, run.failed_as_empty)
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
    metrics = summarize(tallies, **run.settings)
    metrics["documents"] = len(run.docs)
    metrics["annotators"] = sorted({a for d in run.docs.values() for a in d.annotators})
    return problems, metrics, scored_ids


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

