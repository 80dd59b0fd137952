"""``privasis-bench view`` for a TAB run: one static page, document by document, showing what was masked and missed.

Each document's original text is shown with the system's masked spans highlighted, and every mention that needed
masking and was left (partly) visible marked with the annotators who asked for it; the document's own measures and
its output (for a free-form rewrite) sit beside it. Texts come from the run's task data (the shipped sample, or the
files the run read when they are still at the same place).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.escaping import escape
from privasis_bench.leaderboard.viewer import RECOMPUTED
from privasis_bench.results.files import atomic_write_text, load_results, load_sample_rows
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.records import TabDocument
from privasis_bench.tasks.registry import load_task

_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;overflow-wrap:anywhere}
pre{white-space:pre-wrap;line-height:1.5}@media (max-width:700px){body{margin:.6em}}
mark.masked{background:#cfe8cf}mark.missed{background:#f6c4c4;outline:1px solid #c33}
mark.partial{background:#f9e3b4;outline:1px solid #c90}.sub{color:#666;font-size:90%}
section{border-top:1px solid #ccc;margin-top:1.5em}table{border-collapse:collapse}td{padding:0 .8em 0 0}"""


def gold_documents(results: dict[str, Any]) -> dict[str, TabDocument]:
    """doc_id -> gold document, from the run's task (and its local data files when they still exist)."""
    try:
        task = load_task(results["task"]["name"])
        files = [f for f in (results.get("dataset") or {}).get("data_files") or [] if isinstance(f, str)]
        local = [f for f in files if Path(f).is_absolute() and Path(f).is_file()]
        paths = local if local and len(local) == len(files) else list(task.dataset.data_files or [])
        return {d.doc_id: d for d in load_documents(paths)} if paths else {}
    except (PrivasisError, KeyError):
        return {}


def marked_text(text: str, masked: list[list[int]], missed: list[dict[str, Any]]) -> str:
    """``text`` as HTML: masked spans green, missed mentions red (amber when partly masked), with titles."""
    kind = [""] * len(text)
    title = [""] * len(text)
    for start, end in masked:
        for i in range(max(0, start), min(len(text), end)):
            kind[i], title[i] = "masked", "masked by the system"
    for m in missed:
        who = f"missed ({m['identifier_type']} {m['entity_type']}, {m['annotator']})"
        for i in range(m["start"], m["end"]):
            if kind[i] != "masked":
                kind[i] = "partial" if m.get("partial") else "missed"
                title[i] = who if not title[i] or title[i] == who else title[i] + "; " + who
    out, i = [], 0
    while i < len(text):
        j = i
        while j < len(text) and (kind[j], title[j]) == (kind[i], title[i]):
            j += 1
        piece = escape(text[i:j])
        out.append(f"<mark class='{kind[i]}' title='{escape(title[i])}'>{piece}</mark>" if kind[i] else piece)
        i = j
    return "".join(out)


def _section(row: dict[str, Any], doc: TabDocument | None) -> str:
    head = f"<section id='{escape(row['id'])}'><h3>{escape(row['id'])}</h3>"
    if not row.get("scored"):
        return head + f"<p class='sub'>not scored: {escape(str(row.get('error')))}</p></section>"
    measures = " · ".join(f"{k} {v}" for k, v in (row.get("measures") or {}).items() if not isinstance(v, dict))
    body = (f"<pre>{marked_text(doc.text, row['masked_spans'], row.get('missed') or [])}</pre>" if doc is not None
            else "<p class='sub'>original text unavailable (the task's data is not at hand)</p>")
    output = (f"<details><summary>system output ({escape(row.get('span_source') or '')})</summary>"
              f"<pre>{escape(row['output'])}</pre></details>" if row.get("output") is not None else "")
    return head + f"<p class='sub'>{escape(measures)} · {len(row.get('missed') or [])} missed mention(s)</p>" + body + output + "</section>"


def write_span_viewer(task_dir: Path, out: Path, title: str | None = None, back: str | None = None,
                      metrics: dict[str, Any] | None = None) -> Path:
    """Write the span page of one task directory to ``out`` (``back``: the board's address; ``metrics``: the
    verifier's recomputed metrics, which a board's page shows instead of results.json's); returns ``out``."""
    results = load_results(task_dir)
    rows = load_sample_rows(task_dir)
    docs = gold_documents(results)
    m = metrics if metrics is not None else results["metrics"]
    summary = "".join(f"<tr><td>{escape(k)}</td><td>{m[k]:.3f}</td></tr>" for k in
                      ("tps", "trir", "nmi", "token_recall", "mention_recall", "recall_direct_entities",
                       "recall_quasi_entities", "token_precision", "mention_precision", "token_f1")
                      if isinstance(m.get(k), (int, float)) and not isinstance(m.get(k), bool))
    scorer = ("replacement-quality scorer (TPS, TRIR, NMI; TAB's measures below them)"
              if results["metrics"].get("scorer") == "tab_replacement" else "TAB scorer")
    if metrics is not None:
        scorer += f"; numbers {RECOMPUTED}"
    heading = escape(title) if title else escape(results['task']['name'])
    back_link = f"<p><a href='{escape(back)}'>← back to the board</a></p>" if back else ""
    page = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            f"content='width=device-width, initial-scale=1'><title>{heading} — "
            f"{escape(str(results['model']['label']))}</title><style>{_STYLE}</style></head><body>{back_link}"
            f"<h1>{heading} <span class='sub'>model {escape(str(results['model']['label']))} · "
            f"{scorer}</span></h1><table>{summary}</table>"
            "<p class='sub'><mark class='masked'>masked</mark> <mark class='missed'>missed identifier</mark> "
            "<mark class='partial'>partly masked identifier</mark></p>"
            + "".join(_section(r, docs.get(r["id"])) for r in rows) + "</body></html>\n")
    atomic_write_text(out, page)
    return out
