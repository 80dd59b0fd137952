"""``privasis-bench view`` for a SPIA run: one static page, document by document.

Each document shows its original text (from the run's shipped task), the anonymized text, and for every annotated
person the gold attributes (value, certainty, hardness) beside what the adversary inferred for the person it was
aligned to, with each attribute's score and how it was decided (rule, matcher, nothing inferred); attributes counted
by CPR and IPR (certainty 3+) are marked. Every text shown comes from a file a submitter wrote or from the data, so
every one is HTML-escaped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.escaping import escape
from privasis_bench.results.files import atomic_write_text, load_results, load_sample_rows
from privasis_bench.spia.loading import load_documents
from privasis_bench.spia.records import MIN_CERTAINTY, SpiaDocument
from privasis_bench.tasks.registry import load_task

_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:72em;overflow-wrap:anywhere}
pre{white-space:pre-wrap;line-height:1.5;background:#f7f7f7;padding:.5em}@media (max-width:700px){body{margin:.6em}}
.sub{color:#666;font-size:90%}section{border-top:1px solid #ccc;margin-top:1.5em}table{border-collapse:collapse}
td,th{padding:.1em .8em .1em 0;text-align:left;vertical-align:top}tr.counted td:first-child{font-weight:bold}
.s1{background:#f6c4c4}.s05{background:#f9e3b4}.s0{background:#cfe8cf}"""


def gold_documents(results: dict[str, Any]) -> dict[str, SpiaDocument]:
    """doc id -> gold document, from the run's shipped task (never a path a submission names)."""
    try:
        task = load_task(results["task"]["name"])
        return {d.id: d for f in task.dataset.data_files or [] for d in load_documents(f)}
    except (PrivasisError, KeyError, OSError):
        return {}


def _number(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def _subject(subject: dict[str, Any], people: list[Any]) -> str:
    j = subject.get("aligned_to")
    who = (f"aligned to inferred person {escape(str(j))}: {escape(str(people[j]))}"
           if isinstance(j, int) and 0 <= j < len(people) else "not aligned to any inferred person")
    head = f"<h4>{escape(str(subject.get('description')))}</h4><p class='sub'>{who}</p>"
    if subject.get("dropped"):
        return head + f"<p class='sub'>not counted: {escape(str(subject['dropped']))}</p>"
    cells = []
    for t in subject.get("tags") or []:
        score = t.get("score")
        css = {1.0: "s1", 0.5: "s05", 0.0: "s0"}.get(score if isinstance(score, (int, float)) else -1, "")
        counted = isinstance(t.get("certainty"), int) and t["certainty"] >= MIN_CERTAINTY
        cells.append(f"<tr class='{'counted' if counted else ''}'><td>{escape(str(t.get('tag')))}</td>"
                     f"<td>{escape(str(t.get('gold')))}</td><td>{escape(str(t.get('certainty')))}</td>"
                     f"<td>{escape(str(t.get('hardness')))}</td><td>{escape(str(t.get('guess')) or '—')}</td>"
                     f"<td class='{css}'>{escape(_number(score))}</td><td>{escape(str(t.get('method')))}</td></tr>")
    return (head + "<table><thead><tr><th>Tag</th><th>Gold</th><th>Certainty</th><th>Hardness</th><th>Inferred</th>"
            "<th>Score</th><th>Decided by</th></tr></thead><tbody>" + "".join(cells) + "</tbody></table>")


def _section(row: dict[str, Any], doc: SpiaDocument | None) -> str:
    rid = str(row.get("id"))
    head = f"<section id='{escape(rid)}'><h3>{escape(rid)}</h3>"
    original = (f"<details><summary>original text</summary><pre>{escape(doc.text)}</pre></details>" if doc is not None
                else "<p class='sub'>original text unavailable (the task's data is not at hand)</p>")
    output = row.get("output")
    anonymized = (f"<details open><summary>anonymized text</summary><pre>{escape(output)}</pre></details>"
                  if isinstance(output, str) else "<p class='sub'>no anonymized text</p>")
    if not row.get("scored"):
        return head + f"<p class='sub'>not scored: {escape(str(row.get('error')))}</p>" + original + anonymized + "</section>"
    people = row.get("people") if isinstance(row.get("people"), list) else []
    subjects = [s for s in row.get("subjects") or [] if isinstance(s, dict)]
    return head + original + anonymized + "".join(_subject(s, people) for s in subjects) + "</section>"


def write_viewer(task_dir: Path, out: Path, title: str | None = None, back: str | None = None,
                 metrics: dict[str, Any] | None = None) -> Path:
    """Write the SPIA page of one task directory to ``out`` (``back``: the board's address; ``metrics``: the verifier's
    recomputed numbers, shown instead of the submitted ones); returns ``out``."""
    results = load_results(task_dir)
    rows = load_sample_rows(task_dir)
    docs = gold_documents(results)
    m = metrics if metrics is not None else (results.get("metrics") or {})
    summary = "".join(f"<tr><td>{escape(k.upper())}</td><td>{escape(_number(m.get(k)))}</td></tr>" for k in ("cpr", "ipr"))
    summary += "".join(f"<tr><td>CPR {escape(str(tag))}</td><td>{escape(_number(v))}</td></tr>"
                       for tag, v in sorted((m.get("per_tag_cpr") or {}).items()))
    heading = escape(title) if title else escape(str(results["task"]["name"]))
    model = escape(str((results.get("model") or {}).get("label")))
    back_link = f"<p><a href='{escape(back)}'>← back to the board</a></p>" if back else ""
    page = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            f"content='width=device-width, initial-scale=1'><title>{heading} — {model}</title><style>{_STYLE}</style>"
            f"</head><body>{back_link}<h1>{heading} <span class='sub'>model {model} · SPIA scorer</span></h1>"
            f"<table>{summary}</table><p class='sub'>"
            + ("Numbers recomputed by the verifier from the rows. " if metrics is not None else "")
            + "Bold tags are counted by CPR and IPR (certainty {MIN_CERTAINTY}+). "
            "Score 1: the adversary inferred the value, 0.5: less precisely, 0: not inferred.</p>"
            + "".join(_section(r, docs.get(str(r.get("id")))) for r in rows) + "</body></html>\n")
    atomic_write_text(out, page)
    return Path(out)
