"""``privasis-bench view``: one static page to browse a run record by record and see why each target failed.

The instruction the model was given (the variant the run used) with the targets and keeps it names, then the
original and sanitized text side by side; every target value is highlighted with the tier that fired (direct,
inference, proximity) or as sanitized, keep values as retained or missed, with the judge's answers underneath; a
toggle shows the sanitized text as a word-level diff against the original; filters by tier, category and outcome.
Original texts and instructions come from the task's data.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from privasis_bench.data.loading import load_records, with_data_files
from privasis_bench.data.records import Record
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.escaping import escape
from privasis_bench.leaderboard.page import fill, options, template
from privasis_bench.protocol.matching import value_items
from privasis_bench.results.files import atomic_write_text, load_results, load_sample_rows
from privasis_bench.tasks.registry import load_task

#: How a board's viewer page says where its numbers come from.
RECOMPUTED = "recomputed by the verifier from the rows"

TIER_TITLES = {"direct": "direct leak", "inference": "inference leak", "proximity": "proximity leak",
               "sanitized": "sanitized", "null": "null value (not judged)", "unjudged": "unjudged",
               "unparseable": "unparseable answer"}


def original_records(results: dict[str, Any]) -> dict[str, Record]:
    """Record id -> record (text, instructions), from the run's task (and its local data files when they still exist)."""
    try:
        task = load_task(results["task"]["name"])
        files = (results.get("dataset") or {}).get("data_files") or []
        local = [f for f in files if isinstance(f, str) and Path(f).is_absolute() and Path(f).is_file()]
        if local and len(local) == len(files):
            task = with_data_files(task, local)
        return {r.id: r for r in load_records(task, limit=(results.get("dataset") or {}).get("limit")).records}
    except (PrivasisError, KeyError):
        return {}


def _merge(spans: list[tuple[int, int, str, str]], found: list[tuple[int, int, str, str]]) -> list[tuple[int, int, str, str]]:
    """Both lists sorted and non-overlapping: add each span of ``found`` that overlaps none of ``spans`` (one pass)."""
    out: list[tuple[int, int, str, str]] = []
    i = 0
    for span in found:
        while i < len(spans) and spans[i][1] <= span[0]:
            out.append(spans[i])
            i += 1
        if (i < len(spans) and spans[i][0] < span[1]) or (out and out[-1][1] > span[0]):
            continue  # an earlier mark already covers part of it: the first mark wins
        out.append(span)
    out.extend(spans[i:])
    return out


def highlight(text: str, marks: list[tuple[Any, str, str]]) -> str:
    """``text`` as HTML with each (value, css class, title) highlighted where its items occur (first mark wins).

    Linear in the text for a bounded number of marks: each value's matches are merged into the sorted spans in one
    pass (a long output repeating a value thousands of times stays fast).
    """
    spans: list[tuple[int, int, str, str]] = []
    lower = text.lower()
    for value, css, title in marks:
        if value is None:
            continue
        for item in value_items(value):
            if not item.strip():
                continue
            found = [(m.start(), m.end(), css, title) for m in re.finditer(re.escape(item.lower()), lower)]
            if found:
                spans = _merge(spans, found)
    out, pos = [], 0
    for start, end, css, title in spans:
        out.append(escape(text[pos:start]))
        out.append(f"<mark class='{css}' title='{escape(title)}'>{escape(text[start:end])}</mark>")
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out)


_WORDS = re.compile(r"\S+|\s+")
#: Above this many word pairs (after the common start and end are set aside) the changed middle is shown as one
#: removal and one addition instead of a word alignment, which would take quadratic time.
DIFF_BUDGET = 1_000_000


def word_diff(original: str, sanitized: str) -> str:
    """``sanitized`` as HTML against ``original``, word by word: removed words in <del>, added ones in <ins>."""
    a, b = _WORDS.findall(original), _WORDS.findall(sanitized)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head:len(a) - tail], b[head:len(b) - tail]
    if len(mid_a) * len(mid_b) > DIFF_BUDGET:
        opcodes = [("replace", 0, len(mid_a), 0, len(mid_b))]
    else:
        opcodes = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes()
    out = [escape("".join(a[:head]))]
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            out.append(escape("".join(mid_a[i1:i2])))
            continue
        if i2 > i1 and "".join(mid_a[i1:i2]).strip():
            out.append(f"<del>{escape(''.join(mid_a[i1:i2]))}</del>")
        if j2 > j1:
            out.append(f"<ins>{escape(''.join(mid_b[j1:j2]))}</ins>")
    out.append(escape("".join(a[len(a) - tail:])))
    return "".join(out)


def _instruction(row: dict[str, Any], record: Record | None, variant: str) -> str:
    """The instruction block: the text the model was given, and the attributes it asks to drop, abstract or keep."""
    if record is None:
        return "<div class='instruction'><i class='sub'>instruction unavailable (the task's data is not at hand)</i></div>"
    text = record.instruction(variant)
    names = [f"{escape(t['name'])} <span class='sub'>({escape(t.get('kind') or '')})</span>" for t in row.get("targets") or []]
    keeps = [escape(k["name"]) for k in row.get("keep") or []]
    return (f"<div class='instruction'><h4>Instruction <span class='sub'>({escape(variant)})</span></h4>"
            f"<p class='instruction-text'>{escape(text)}</p>"
            f"<p class='sub'>targets: {', '.join(names) or 'none'} · keep: {', '.join(keeps) or 'none'}</p></div>")


def _outcome(row: dict[str, Any]) -> str:
    if row.get("status") == "excluded":
        return "excluded"
    if row.get("status") != "judged":
        return row.get("status", "unjudged")
    targets = [t for t in row.get("targets") or [] if t.get("tier") != "null"]
    keep = [k for k in row.get("keep") or [] if k.get("retained") is not None]
    san = bool(targets) and all(t["tier"] == "sanitized" for t in targets)
    ret = bool(keep) and all(k["retained"] for k in keep)
    return {(True, True): "full success", (True, False): "retention failed",
            (False, True): "sanitization failed"}.get((san, ret), "both failed")


def _answers(row: dict[str, Any]) -> str:
    lines = []
    for t in row.get("targets") or []:
        answers = " · ".join(f"{label}: <q>{escape(str(t[key]))}</q>" for key, label in
                             (("guess", "guess"), ("original_guess", "guess on original"), ("compare_answer", "closer"))
                             if t.get(key) is not None)
        lines.append(f"<tr><td>target</td><td>{escape(t['name'])} <span class='sub'>({escape(t.get('kind') or '')})</span></td>"
                     f"<td><q>{escape(', '.join(value_items(t['value'])) if t['value'] is not None else 'null')}</q></td>"
                     f"<td><span class='pill {t['tier']}'>{escape(TIER_TITLES.get(t['tier'], t['tier']))}</span></td>"
                     f"<td>{answers}</td></tr>")
    for k in row.get("keep") or []:
        state = "null" if k.get("retained") is None else ("retained" if k["retained"] else "missed")
        answers = " · ".join(f"{label}: <q>{escape(str(k[key]))}</q>" for key, label in
                             (("guess", "guess"), ("inclusion_answer", "present?")) if k.get(key) is not None)
        lines.append(f"<tr><td>keep</td><td>{escape(k['name'])}</td>"
                     f"<td><q>{escape(', '.join(value_items(k['value'])) if k['value'] is not None else 'null')}</q></td>"
                     f"<td><span class='pill {state}'>{state} <span class='sub'>({escape(k.get('via') or '')})</span></span>"
                     f"</td><td>{answers}</td></tr>")
    return ("<table class='answers'><thead><tr><th>role</th><th>attribute</th><th>value</th><th>verdict</th>"
            f"<th>judge answers</th></tr></thead><tbody>{''.join(lines)}</tbody></table>")


def _record(row: dict[str, Any], record: Record | None, variant: str) -> str:
    original = record.text if record is not None else None
    marks = [(t.get("value"), f"t-{t.get('tier')}", f"target {t.get('name')}: {TIER_TITLES.get(t.get('tier'), '')}")
             for t in row.get("targets") or []]
    marks += [(k.get("value"), "k-" + ("retained" if k.get("retained") else "missed"), f"keep {k.get('name')}")
              for k in row.get("keep") or []]
    outcome, tiers = _outcome(row), sorted({t.get("tier") for t in row.get("targets") or []})
    output = row.get("output")
    left = highlight(original, marks) if original is not None else "<i class='sub'>original text unavailable</i>"
    right = ("<i class='sub'>model call failed: " + escape(str(row.get("output_error"))) + "</i>" if row.get("output_failed")
             else (highlight(output, marks) if output else "<i class='sub'>empty output</i>"))
    diff = word_diff(original, output) if original is not None and output else right
    body = "" if row.get("status") == "excluded" else (
        _instruction(row, record, variant)
        + f"<div class='pair'><div><h4>Original</h4><pre>{left}</pre></div><div><h4>Sanitized</h4>"
        f"<pre class='plain'>{right}</pre><pre class='diff'>{diff}</pre></div></div>"
        + _answers(row))
    return (f"<article data-tiers='{escape(' '.join(tiers))}' data-category='{escape(row.get('category') or '')}' "
            f"data-outcome='{escape(outcome)}'><h3>{escape(str(row['record_id']))} <span class='pill o-{outcome.replace(' ', '-')}'>"
            f"{escape(outcome)}</span> <span class='sub'>{escape(row.get('category') or '')} · "
            f"{escape(row.get('record_type') or '')}</span></h3>{body}</article>")


def back_link(href: str | None) -> str:
    """The link back to the board a board's viewer page carries ('' for a page written on its own)."""
    return f"<p class='back'><a href='{escape(href)}'>← back to the board</a></p>" if href else ""


def render_viewer(task_dir: str | Path, title: str | None = None, back: str | None = None,
                  metrics: dict[str, Any] | None = None) -> str:
    """The viewer page of one task directory (results.json + samples.jsonl); ``back``: the board's address;
    ``metrics``: the verifier's recomputed metrics (the board's page shows those, never results.json's)."""
    results, rows = load_results(task_dir), load_sample_rows(task_dir)
    originals = original_records(results)
    variant = results.get("instruction") or "base"
    headline = ((metrics if metrics is not None else results.get("metrics")) or {}).get("headline") or {}
    summary = " · ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in sorted(headline.items()) if v is not None)
    if metrics is not None and summary:
        summary += f" ({RECOMPUTED})"
    title = title or f"{results['model']['label']} on {results['task']['name']}"
    return fill(
        template("viewer.html"),
        style=template("style.css") + template("viewer.css"),
        title=escape(title),
        back=back_link(back),
        meta=escape(f"model {results['model']['label']} · judge {results['judge']['label']} · parse mode "
                    f"{results.get('parse_mode')} · {len(rows)} records"),
        summary=escape(summary),
        tier_options=options([t for t in TIER_TITLES if any(t == x.get("tier") for r in rows for x in r.get("targets") or [])]),
        category_options=options(sorted({r.get("category") or "" for r in rows} - {""})),
        outcome_options=options(sorted({_outcome(r) for r in rows})),
        records="".join(_record(r, originals.get(str(r["record_id"])), variant) for r in rows),
    )


def write_viewer(task_dir: str | Path, out: str | Path, title: str | None = None, back: str | None = None,
                 metrics: dict[str, Any] | None = None) -> Path:
    """Write the viewer page of ``task_dir`` to ``out`` (``metrics``: as for :func:`render_viewer`); returns ``out``."""
    atomic_write_text(out, render_viewer(task_dir, title, back, metrics))
    return Path(out)
