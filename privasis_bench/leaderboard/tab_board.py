"""The TAB section of the board: verified ``tab_sample`` / ``tab_test`` runs with TAB's own columns.

Kept apart from the Privasis board (its own files, ``tab.json`` and ``tab.md``, never mixed with Privasis metrics).
A run enters only when verification recomputes it: the task is a shipped TAB task with the same config hash; every
document of the task has a row; spans a rewrite was aligned to are aligned again from the stored output; every
document's counts are recounted from its spans against the gold with the spaCy pipeline the run recorded; and the
pooled measures and their bootstrap intervals come out the same. Spans a masking system reported are taken as
reported (they are what it masked; re-running the system is the way to check them).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.bounds import bootstrap_problems
from privasis_bench.leaderboard.markdown import md_cell
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.results.files import RESULTS_NAME, atomic_write_text, dumps_json, load_results, load_sample_rows
from privasis_bench.tab.alignment import masked_spans
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.metrics import tally_document
from privasis_bench.tab.scorer import summarize, tallies_from_rows
from privasis_bench.tab.tokens import spacy_ignore_map

TAB_BOARD_FORMAT = "privasis-bench/tab-board/1"
COLUMNS: tuple[tuple[str, str], ...] = (
    ("token_recall", "Token recall"), ("mention_recall", "Mention recall"),
    ("recall_direct_entities", "Entity recall (direct)"), ("recall_quasi_entities", "Entity recall (quasi)"),
    ("token_precision", "Token precision"), ("mention_precision", "Mention precision"), ("token_f1", "Token F1"),
)


def verify_tab_run(task_dir: Path) -> list[str]:
    """Problems found recomputing one TAB run directory (empty: verified); a broken file is one problem, not a crash.

    Everything the check relies on comes from the verifier's side: the shipped task (never a path a run names), its
    shipped documents (never a data file a run points at) and the task's bootstrap settings.
    """
    try:
        return _verify_tab_run(task_dir)
    except (PrivasisError, OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        return [f"unreadable or malformed run ({type(exc).__name__}: {str(exc)[:200]})"]


def _verify_tab_run(task_dir: Path) -> list[str]:
    results = load_results(task_dir)
    scorer = results.get("scorer") or {}
    if scorer.get("name") != "tab":
        return [f"scorer is {scorer.get('name')!r}, not tab"]
    try:
        task = shipped_task(results["task"]["name"])
    except PrivasisError as exc:
        return [f"task: {exc}"]
    if task.config_hash() != results["task"].get("config_hash"):
        return ["config_hash differs from the shipped task's (a changed task or template)"]
    if bad_boot := bootstrap_problems(results, task):
        return bad_boot
    if not task.dataset.data_files:
        return [f"task {task.task!r} has no shipped documents to verify against"]
    docs = {d.doc_id: d for d in load_documents(list(task.dataset.data_files))}
    rows = {r["id"]: r for r in load_sample_rows(task_dir)}
    limit = (results.get("dataset") or {}).get("limit")
    expected = list(docs)[:limit] if limit else list(docs)
    problems = [f"document {d}: no samples row" for d in expected if d not in rows]
    problems += [f"row {r}: not a document of the task" for r in rows if r not in docs]
    ignore = spacy_ignore_map((scorer.get("tokens") or {}).get("spacy_pipeline"))
    for doc_id, row in rows.items():
        if doc_id not in docs or not row.get("scored"):
            continue
        spans = [tuple(s) for s in row["masked_spans"]]
        if row.get("span_source") == "alignment" and [tuple(s) for s in masked_spans(docs[doc_id].text, row["output"] or "")] != spans:
            problems.append(f"document {doc_id}: masked_spans are not the alignment of the stored output")
        recount = {k: v for k, v in tally_document(docs[doc_id], spans, ignore).counts.items() if v}
        if recount != {k: v for k, v in row["counts"].items() if v}:
            problems.append(f"document {doc_id}: counts differ from a recount of its spans")
    boot = results["metrics"]["bootstrap"]
    again = summarize(tallies_from_rows(list(rows.values())), bootstrap_samples=boot["samples"], seed=boot["seed"],
                      confidence=boot["confidence"])
    for key, _ in COLUMNS:
        stored, new = results["metrics"].get(key), again[key]
        if not isinstance(stored, (int, float)) or not math.isclose(stored, new, abs_tol=1e-12):
            problems.append(f"metrics.{key}: stored {stored}, recomputed {new}")
        if (results["metrics"].get("ci") or {}).get(key) != again["ci"].get(key):
            problems.append(f"metrics.ci.{key}: differs from the recomputed interval")
    return problems


def build_tab_section(root: Path, out_dir: Path) -> tuple[Path, Path, list[str]]:
    """Verify every TAB run under ``root`` (``<entry>/<task>/results.json``) and write ``tab.json`` and ``tab.md``.

    Returns the two paths and the runs left out with why."""
    entries: list[dict[str, Any]] = []
    rejected: list[str] = []
    for results_path in sorted(root.rglob(RESULTS_NAME)) if root.is_dir() else []:
        task_dir = results_path.parent
        problems = verify_tab_run(task_dir)
        if problems:
            rejected.append(f"{task_dir}: {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
            continue
        res = json.loads(results_path.read_text(encoding="utf-8"))
        m = res["metrics"]
        entries.append({"entry": task_dir.parent.name, "task": res["task"]["name"], "model": res["model"]["label"],
                        "rankable": res["model"].get("rankable"), "documents": m["scored_documents"],
                        "tokens": res["scorer"]["tokens"].get("spacy_pipeline"),
                        "metrics": {k: m[k] for k, _ in COLUMNS}, "ci": {k: m["ci"].get(k) for k, _ in COLUMNS}})
    entries.sort(key=lambda e: (e["task"], -e["metrics"]["token_f1"], e["entry"]))
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "tab.json", out_dir / "tab.md"
    atomic_write_text(json_path, dumps_json({"format": TAB_BOARD_FORMAT, "columns": dict(COLUMNS), "entries": entries}))
    atomic_write_text(md_path, _markdown(entries))
    return json_path, md_path, rejected


def _markdown(entries: list[dict[str, Any]]) -> str:
    lines = ["# TAB (Text Anonymization Benchmark) — verified runs", "",
             "TAB's own measures (see docs/tab.md), micro-averaged over annotators; 95% bootstrap intervals over",
             "documents. Never mixed with the Privasis columns.", ""]
    for task in sorted({e["task"] for e in entries}):
        lines += [f"## {task}", "", "| model | " + " | ".join(label for _, label in COLUMNS) + " | documents | tokens |",
                  "|---|" + "---:|" * len(COLUMNS) + "---:|---|"]
        for e in (e for e in entries if e["task"] == task):
            cells = [f"{e['metrics'][k]:.3f}" + (f" [{e['ci'][k]['low']:.3f}, {e['ci'][k]['high']:.3f}]" if e["ci"].get(k) else "")
                     for k, _ in COLUMNS]
            lines.append(f"| {md_cell(e['model'])} | " + " | ".join(cells) + f" | {e['documents']} | {md_cell(e['tokens'])} |")
        lines.append("")
    return "\n".join(lines) + "\n"
