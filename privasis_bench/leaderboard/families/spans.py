"""What the span-scored families (TAB, replacement quality) share on the board: the verifier's skeleton
(:func:`span_verify`: rows matched with the shipped documents, counts checked), the board row's shared fields and the
digest of the scored content.

* **Spans** are re-derived from each output and the document text (:func:`privasis_bench.tab.alignment.masked_spans`).
  Reported spans count only for a span masker (an adapter class with ``reports_spans``); they must be in bounds,
  sorted, disjoint and agree with the output (every stretch outside them appears in it, in order; no span's text is
  left in its replacement), and even then count only where the output no longer shows their words
  (:func:`privasis_bench.tab.shown.scored_spans`, the scorer's own rule). Any other row's ``masked_spans`` must
  equal the alignment of its output.
* **Scored or not** follows from the row's output (a text and no error; a failed output only under
  ``--score-failed-as-empty``), never from its ``scored`` flag; a run that scores fewer documents than the task, or
  used ``--limit``, is partial and ranks only with runs over the same documents.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.entry_facts import adapter_attribute
from privasis_bench.leaderboard.escaping import number
from privasis_bench.leaderboard.family_api import (
    EntryInput,
    FamilyVerdict,
    bootstrap_settings,
    config_hash_problem,
    family_named,
)
from privasis_bench.leaderboard.scored_content import digest, normal_text
from privasis_bench.results.files import SAMPLES_NAME
from privasis_bench.tab.alignment import masked_spans
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.records import TabDocument
from privasis_bench.tab.shown import reported_spans, scored_spans
from privasis_bench.tasks.config import TaskConfig

#: Most documents one TAB entry may hold rows for (bounds the verifier's alignment work with the text limits).
MAX_DOCUMENTS = 20000


def span_masker(results: Mapping[str, Any]) -> bool:
    """True when the recorded model spec names a shipped span-masking adapter (``reports_spans``)."""
    model = results.get("model") if isinstance(results.get("model"), Mapping) else {}
    return bool(adapter_attribute(model.get("spec"), "reports_spans", False))  # a plugin's rows are aligned instead


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


def tagger_claim_problems(res: Mapping[str, Any], used: Mapping[str, Any]) -> list[str]:
    """The spaCy pipeline results.json says tagged the tokens must be the one the verifier tagged with (else the
    entry would publish a claim, e.g. the official ``en_core_web_md``, that no recomputed number supports)."""
    scorer = res.get("scorer") if isinstance(res.get("scorer"), Mapping) else {}
    claimed = scorer.get("tokens") if isinstance(scorer.get("tokens"), Mapping) else {}
    return [f"scorer.tokens.{key} is {str(claimed.get(key))[:60]!r}, but the verifier tagged with "
            f"{str(used.get(key))[:60]!r} (re-run with that pipeline, or verify where yours is installed)"
            for key in ("spacy_pipeline", "spacy_pipeline_version") if claimed.get(key) != used.get(key)]


def check_counts(res: Mapping[str, Any], *, every: int, loaded: int, scored_ids: list[str], failed: int,
                 failed_as_empty: bool, masker: Any) -> tuple[list[str], dict[str, Any]]:
    """A span-scored entry's counts and completeness checked against what its rows give: (problems, the facts the
    board shows)."""
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
    facts = {"partial": len(scored_ids) < every, "records_of_task": every, "scored_records": len(scored_ids),
             "span_masker": masker, "failed_outputs": failed,
             "record_set": hashlib.sha256("\n".join(sorted(scored_ids)).encode("utf-8")).hexdigest()}
    return problems, facts


#: The facts of an entry made with documents of the user's own (re-pooled from its rows only, self-reported).
SELF_REPORTED_FACTS = {"partial": True, "records_of_task": None, "scored_records": None}


def span_content(rows: list[dict[str, Any]], results: Mapping[str, Any] | None = None) -> str:
    """The digest of a span-scored entry's scored content: per document (in id order) the output text, and the
    reported spans only for a span masker's rows (the verifier ignores every other row's spans)."""
    masker = span_masker(results or {})
    items = [[str(r.get("id")), normal_text(r.get("output")), r.get("masked_spans") if masker else None] for r in rows]
    return digest(sorted(items, key=lambda i: i[0]))


def span_row(v: Any, task: str, viewer: str | None, columns: tuple[tuple[str, str], ...],
             metrics: Mapping[str, Any], scale: float | None = None, decimals: int = 6) -> dict[str, Any]:
    """The board row of one verified span-scored entry: the shared fields, then ``columns`` of the recomputed
    ``metrics`` with their intervals (``scale``: multiply each, e.g. 100 for percent, and round to ``decimals``)."""
    sub, res, facts = v.submission, v.results, v.facts()
    row: dict[str, Any] = {
        "name": str(sub["name"]), "label": sub.get("label"), "track": sub["track"],
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
    for key, _ in columns:
        ci = (metrics.get("ci") or {}).get(key) or {}
        row.update({key: _scaled(metrics.get(key), scale, decimals),
                    f"{key}_low": _scaled(ci.get("low"), scale, decimals),
                    f"{key}_high": _scaled(ci.get("high"), scale, decimals)})
    return row


def _scaled(value: Any, scale: float | None, decimals: int) -> Any:
    if scale is None:
        return value
    return None if number(value) is None else round(scale * float(value), decimals)


@dataclass(frozen=True)
class SpanRun:
    """A span-scored entry's rows matched with the shipped documents within its limit (what a family scores)."""

    docs: dict[str, TabDocument]
    by_id: dict[str, dict[str, Any]]
    masker: bool  # the model is a span masker (its reported spans count, checked)
    failed_as_empty: bool
    settings: dict[str, Any]  # the recorded bootstrap settings, as keyword arguments


def span_verify(entry: EntryInput, rescore_own: Callable[..., dict[str, Any]],
                score: Callable[[EntryInput, SpanRun], tuple[list[str], dict[str, Any] | None, list[str]]]) -> FamilyVerdict:
    """A span-scored family's verifier. An entry with inputs of its own is re-pooled from its rows by
    ``rescore_own(rows, metrics, **settings)`` (self-reported); any other is matched with the shipped documents
    (:func:`index_rows`) and recomputed by ``score``, which returns its problems, the metrics (None: none) and the
    scored document ids; then its counts are checked (:func:`check_counts`). Each problem is named by the samples
    file, after the task-hash problem."""
    res = entry.results
    settings = bootstrap_settings(res)
    problems: list[str] = []
    metrics, facts, every = None, {}, None
    if entry.custom:
        metrics, facts = rescore_own(entry.rows, res["metrics"], **settings), dict(SELF_REPORTED_FACTS)
    elif isinstance(indexed := index_rows(entry.task, res, entry.rows), list):
        problems = indexed
    else:
        docs, by_id = indexed[1], indexed[2]
        failed_as_empty = (res.get("checks") or {}).get("failed_outputs") == "scored_as_empty"
        run = SpanRun(docs, by_id, span_masker(res), failed_as_empty, settings)
        problems, metrics, scored = score(entry, run)
        if metrics is not None:
            every = len(indexed[0])
            failed = sum(not (isinstance(by_id[d].get("output"), str) and by_id[d].get("error") is None) for d in docs)
            counted, facts = check_counts(res, every=every, loaded=len(docs), scored_ids=scored, failed=failed,
                                          failed_as_empty=failed_as_empty, masker=run.masker)
            problems = problems + counted
    where = entry.folder / SAMPLES_NAME
    return FamilyVerdict(problems=tuple(config_hash_problem(entry) + [f"{where}: {p}" for p in problems]),
                         metrics=metrics, facts=facts, task_records=every)


def board_row(v: Any, task: str, viewer: str | None) -> dict[str, Any]:
    """The board row of one verified entry of a span-scored family: the shared fields, then the family's columns of
    the recomputed metrics with their intervals."""
    return span_row(v, task, viewer, family_named(v.family).board.columns, v.recomputed)
