"""The TAB family on the shared board: recompute a TAB entry from its outputs and the documents the verifier holds.

Nothing a TAB row derives is taken as given:

* **Spans** are re-derived from each output and the document text (:func:`privasis_bench.tab.alignment.masked_spans`).
  Reported spans count only when the model spec names a span masker (an adapter class with ``reports_spans``:
  ``regex-scrubber``, ``presidio``); they must then be in bounds, sorted, disjoint, and agree with the output text:
  every stretch of the document outside the spans appears in the output, in order, and no span's original text is
  left in its replacement. Even then a reported span counts only where the output no longer shows its words
  (:func:`privasis_bench.tab.shown.scored_spans`, the scorer's own rule): a span over the whole document counts what
  the output changed, no more. Any other row's ``masked_spans`` must equal the alignment of its output.
* **Scored or not** follows from the row's output (a text and no error; a failed output only under
  ``--score-failed-as-empty``), never from its ``scored`` flag: a row cannot drop a document by saying
  ``scored: false``.
* **Counts, missed mentions, per-document measures** are recounted from the spans against the shipped gold with the
  task's own spaCy pipeline; the pooled measures and their bootstrap intervals are recomputed with the task's
  settings and compared, field by field, with ``results.json``.
* **Partial**: every document of the task is scored, or the run is partial (fewer documents scored, or a
  ``--limit``) and ranks only with runs over the same documents.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from privasis_bench.adapters.registry import BUILTIN_PROVIDERS, load_adapter_class
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.families import TAB_COLUMNS
from privasis_bench.tab.alignment import masked_spans
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.metrics import pooled, tally_document
from privasis_bench.tab.records import TabDocument
from privasis_bench.tab.scorer import rescore_rows, summarize
from privasis_bench.tab.shown import reported_spans, scored_spans
from privasis_bench.tab.tokens import spacy_ignore_map
from privasis_bench.tasks.config import TaskConfig

#: Most documents one TAB entry may hold rows for (bounds the verifier's alignment work with the text limits).
MAX_DOCUMENTS = 20000


def span_masker(results: Mapping[str, Any]) -> bool:
    """True when the recorded model spec names a shipped span-masking adapter (``reports_spans``)."""
    spec = ((results.get("model") or {}) if isinstance(results.get("model"), Mapping) else {}).get("spec")
    provider = spec.get("provider") if isinstance(spec, Mapping) else None
    if provider not in BUILTIN_PROVIDERS:
        return False  # a plugin's claim to report spans is beyond the verifier: its rows are aligned instead
    try:
        return bool(getattr(load_adapter_class(provider), "reports_spans", False))
    except Exception:  # noqa: BLE001 - an optional back-end not installed here: aligned like any rewrite
        return False


def span_problems(text: str, spans: Any, output: Any) -> str | None:
    """Why reported spans do not describe ``output`` as a masking of ``text`` (None when they do)."""
    if not isinstance(output, str):
        return "a span masker's row has no output text to check its spans against"
    if not isinstance(spans, list) or not all(isinstance(s, list) and len(s) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in s) for s in spans):
        return "masked_spans must be a list of [start, end] integer pairs"
    end_prev = 0
    for start, end in spans:
        if not end_prev <= start < end <= len(text):
            return f"span [{start}, {end}] is out of order, empty, overlapping or outside the document"
        end_prev = end
    end_prev, pos = 0, 0
    for start, end in spans:
        keep = text[end_prev:start]
        found = output.find(keep, pos)
        if found < 0 or (end_prev == 0 and found != 0):
            return f"the document text before span [{start}, {end}] is not in the output where the span says"
        replacement_from = found + len(keep)
        nxt = text[end:next((s for s, _ in spans if s >= end), len(text))]
        after = output.find(nxt, replacement_from) if nxt else len(output)
        replaced = output[replacement_from:after] if after >= 0 else output[replacement_from:]
        if text[start:end].strip() and text[start:end].casefold() in replaced.casefold():
            return f"span [{start}, {end}] claims {text[start:end][:40]!r} masked but the output keeps it"
        end_prev, pos = end, replacement_from
    tail = text[end_prev:]
    if not output.endswith(tail) or len(output) - len(tail) < pos:
        return "the document text after the last span is not the end of the output"
    return None


def derived_spans(doc: TabDocument, row: Mapping[str, Any], masker: bool, failed_as_empty: bool) -> tuple[list | None, str | None]:
    """(spans, problem) for one row: the spans the verifier scores (None: unscored) and why the row's are refused."""
    output, error = row.get("output"), row.get("error")
    usable = isinstance(output, str) and error is None
    if not usable:
        return (masked_spans(doc.text, "") if failed_as_empty else None), None
    if masker:  # reported spans count only where the output no longer shows the text (tab/shown.py)
        claimed = reported_spans(row)
        bad = span_problems(doc.text, claimed, output)
        return (None, bad) if bad else (scored_spans(doc.text, claimed, output), None)
    return masked_spans(doc.text, output), None


def index_rows(task: TaskConfig, results: Mapping[str, Any], rows: list[dict[str, Any]]
               ) -> list[str] | tuple[list[TabDocument], dict[str, TabDocument], dict[str, dict[str, Any]]]:
    """(every document of the task, the documents within the run's limit by id, the rows by id), or the problems
    that stop a TAB-schema entry before scoring: unreadable documents, too many rows, a repeated or unknown id, a
    document without a row."""
    if not task.dataset.data_files:
        return [f"task {task.task!r} ships no documents to verify against (self-reported only)"]
    try:
        every = load_documents(list(task.dataset.data_files))
    except PrivasisError as exc:
        return [f"task {task.task!r}: cannot read its documents ({exc})"]
    limit = (results.get("dataset") or {}).get("limit")
    docs = {d.doc_id: d for d in (every[:limit] if isinstance(limit, int) and limit > 0 else every)}
    if len(rows) > MAX_DOCUMENTS:
        return [f"{len(rows)} rows, more than {MAX_DOCUMENTS} documents"]
    problems: list[str] = []
    by_id: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows, start=1):
        rid = str(row.get("id"))
        if rid in by_id:
            problems.append(f"line {n}: document {rid[:80]!r} has a second row")
        elif rid not in docs:
            problems.append(f"line {n}: {rid[:80]!r} is not a document of the task{' within its limit' if limit else ''}")
        by_id.setdefault(rid, row)
    problems += [f"document {d}: no samples row (every document of the task has one)" for d in docs if d not in by_id]
    return problems or (every, docs, by_id)


def recompute(v: Any, task: TaskConfig, rows: list[dict[str, Any]], custom: bool) -> tuple[list[str], dict[str, Any] | None]:
    """(problems, recomputed metrics) of one TAB entry (see the module docstring); sets ``v.family_facts``."""
    res = v.results
    if custom:  # documents of the user's own: the verifier holds no gold; numbers are re-pooled from the rows only
        boot = res["metrics"]["bootstrap"]
        v.family_facts = {"partial": True, "records_of_task": None, "scored_records": None}
        return [], rescore_rows(rows, res["metrics"], bootstrap_samples=boot["samples"], seed=boot["seed"],
                                confidence=boot["confidence"])
    indexed = index_rows(task, res, rows)
    if isinstance(indexed, list):
        return indexed, None
    every, docs, by_id = indexed
    problems: list[str] = []
    masker = span_masker(res)
    failed_as_empty = (res.get("checks") or {}).get("failed_outputs") == "scored_as_empty"
    ignore = spacy_ignore_map(task.scorer_args.get("spacy_model"))
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
    boot = res["metrics"]["bootstrap"]
    metrics = summarize(tallies, bootstrap_samples=boot["samples"], seed=boot["seed"], confidence=boot["confidence"])
    metrics["documents"] = len(docs)
    metrics["annotators"] = sorted({a for d in docs.values() for a in d.annotators})
    problems += check_counts_and_record_facts(v, res, every=len(every), loaded=len(docs), scored_ids=scored_ids,
                                              failed=failed, failed_as_empty=failed_as_empty, masker=masker)
    return problems, metrics


def check_counts_and_record_facts(v: Any, res: Mapping[str, Any], *, every: int, loaded: int, scored_ids: list[str],
                                  failed: int, failed_as_empty: bool, masker: Any) -> list[str]:
    """A span-scored entry's counts and completeness checked against what its rows give, and the facts the board
    shows recorded on ``v`` (shared by every family that scores TAB documents)."""
    problems = []
    counts = res.get("counts") or {}
    for key, value in (("scored", len(scored_ids)), ("failed_outputs", failed), ("records_loaded", loaded)):
        if counts.get(key) != value:
            problems.append(f"counts.{key} is {counts.get(key)!r}; the rows give {value}")
    if failed and not failed_as_empty:
        problems.append(f"{failed} document(s) with a failed output: an unfinished run (re-run to retry them, or "
                        "score them as empty with --score-failed-as-empty, which the board then shows)")
    if res.get("complete") is not True or (res.get("checks") or {}).get("passed") is not True:
        problems.append("complete/checks.passed is not true: only finished runs go on the board")
    v.task_records = every
    v.family_facts = {"partial": len(scored_ids) < every, "records_of_task": every,
                      "scored_records": len(scored_ids), "span_masker": masker, "failed_outputs": failed,
                      "record_set": hashlib.sha256("\n".join(sorted(scored_ids)).encode("utf-8")).hexdigest()}
    return problems


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
    """The board row of one verified TAB entry: the shared fields plus TAB's columns and intervals."""
    sub, res, facts = v.submission, v.results, v.facts()
    m = res["metrics"]
    row: dict[str, Any] = {
        "family": "tab", "name": str(sub["name"]), "label": sub.get("label"), "track": sub["track"],
        "rejudged": False, "reference": bool(sub.get("reference")), "task": task,
        "model": str((res.get("model") or {}).get("label")), "judge": None,
        "records": facts.get("scored_records"), "records_loaded": (res.get("dataset") or {}).get("records_loaded"),
        "task_records": facts.get("records_of_task"), "limit": (res.get("dataset") or {}).get("limit"),
        "record_set": facts.get("record_set") or "self-reported documents",
        "partial": bool(facts.get("partial")), "gold_reading": not facts.get("rankable", True),
        "rankable": bool(facts.get("rankable", True)) and not sub.get("reference"),
        "rejudge_agreement": None, "viewer": viewer, "marks": [],
        "tolerated": [f"failed outputs scored as empty: {facts['failed_outputs']}"] if facts.get("failed_outputs") else [],
        "span_source": "reported spans (span masker, checked against the output)" if facts.get("span_masker")
        else "spans aligned from the output",
        "harness_version": (sub.get("harness") or {}).get("version"),
        "tokens": (res.get("scorer") or {}).get("tokens", {}).get("spacy_pipeline")
        if isinstance((res.get("scorer") or {}).get("tokens"), dict) else None,
    }
    for key, _ in TAB_COLUMNS:
        ci = (m.get("ci") or {}).get(key) or {}
        row.update({key: m.get(key), f"{key}_low": ci.get("low"), f"{key}_high": ci.get("high")})
    return row
