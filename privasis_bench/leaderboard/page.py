"""The static leaderboard page: a template file filled with a sortable, filterable table and inline SVG charts."""

from __future__ import annotations

from html import escape
from importlib import resources
from typing import Any

from privasis_bench.leaderboard.charts import leak_bars, scatter


def template(name: str) -> str:
    """A page template shipped in ``leaderboard/templates/``."""
    return resources.files("privasis_bench.leaderboard").joinpath("templates", name).read_text("utf-8")


def fill(text: str, **parts: str) -> str:
    """Replace each ``<!--@name-->`` marker of a template by its part (parts are already HTML)."""
    for key, value in parts.items():
        text = text.replace(f"<!--@{key}-->", value)
    return text


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _health_cell(e: dict[str, Any]) -> str:
    """Failed outputs, unjudged records, off-label and cut judge answers; highlighted when any is non-zero."""
    parts = [e.get(k) for k in ("failed_outputs", "unjudged", "off_label", "cut_judge_answers")]
    total = sum(p or 0 for p in parts)
    text = " / ".join("–" if p is None else str(p) for p in parts)
    version = f"<div class='sub'>harness {escape(str(e.get('harness_version')))}</div>" if e.get("harness_version") else ""
    return f"<td data-v='{total}' class='health{' partial' if total else ''}'>{text}{version}</td>"


def _table(entries: list[dict[str, Any]], headline: tuple[tuple[str, str], ...]) -> str:
    head = ["<th data-sort='text'>Entry</th><th data-sort='text' class='txt'>Task</th><th data-sort='text' class='txt'>Track</th>",
            "<th data-sort='num'>Records</th>",
            "<th data-sort='num' title='failed model outputs / unjudged records / off-label judge answers / judge "
            "answers cut at the token budget (all zero for a clean entry)'>Failed / unjudged / off-label / cut</th>"]
    head += [f"<th data-sort='num' data-key='{k}'>{escape(t)}</th>" for k, t in headline]
    head.append("<th>Run</th>")
    body = []
    for e in entries:
        notes = " ".join(f"<span class='tag'>{escape(n)}</span>" for n in
                         [e.get("label"), "reference" if e["reference"] else None,
                          f"limit {e['limit']}" if e.get("limit") else None, *(e.get("marks") or [])] if n)
        cells = [f"<td data-v='{escape(e['name'])}'><b>{escape(e['name'])}</b> {notes}"
                 f"<div class='sub'>{escape(e['model'])} · judge {escape(e['judge'])}</div></td>",
                 f"<td class='txt' data-v='{escape(e['task'])}'>{escape(e['task'])}</td>",
                 f"<td class='txt' data-v='{escape(e['track'])}'><span class='track {escape(e['track'])}'>{escape(e['track'])}</span></td>",
                 f"<td data-v='{e['records']}'>{e['records']}</td>",
                 _health_cell(e)]
        for key, _ in headline:
            v, lo, hi = e.get(key), e.get(f"{key}_low"), e.get(f"{key}_high")
            cells.append(f"<td data-v='{'' if v is None else v}'>{_num(v)}<div class='ci'>[{_num(lo)}, {_num(hi)}]</div></td>")
        link = f"<a href='{escape(e['viewer'])}'>records →</a>" if e.get("viewer") else ""
        cells.append(f"<td>{link}</td>")
        body.append(f"<tr data-task='{escape(e['task'])}' data-track='{escape(e['track'])}'>{''.join(cells)}</tr>")
    return f"<table id='board'><thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _categories(entries: list[dict[str, Any]]) -> str:
    cats = sorted({c["category"] for e in entries for c in e.get("failures_by_category") or []})
    if not cats:
        return "<p class='sub'>No scored record yet.</p>"
    head = "<th>Entry · task</th>" + "".join(f"<th>{escape(c)}</th>" for c in cats)
    rows = []
    for e in entries:
        rates = {c["category"]: c for c in e.get("failures_by_category") or []}
        cells = []
        for c in cats:
            info = rates.get(c)
            if info is None:
                cells.append("<td class='none'>–</td>")
                continue
            rate = info["failure_rate"]
            cells.append(f"<td style='background:rgba(220,38,38,{rate / 125:.2f})' title='{info['failed_records']} of "
                         f"{info['records']} records failed'>{rate:.0f}%</td>")
        rows.append(f"<tr data-task='{escape(e['task'])}' data-track='{escape(e['track'])}'><td>{escape(e['name'])} · "
                    f"{escape(e['task'])}</td>{''.join(cells)}</tr>")
    return f"<table class='heat'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _paper(reported: dict[str, Any], headline: tuple[tuple[str, str], ...]) -> str:
    parts = [f"<p class='sub'>{escape(reported['source'])}. Records: "
             + ", ".join(f"{escape(k)} {v}" for k, v in sorted(reported["records"].items())) + ".</p>"]
    for split, rows in sorted(reported["splits"].items(), key=lambda kv: kv[0] != "vanilla"):
        head = "<th>Model</th>" + "".join(f"<th>{escape(t)}</th>" for _, t in headline)
        body = "".join("<tr><td>" + escape(r["model"]) + "</td>" + "".join(f"<td>{r[k]:.2f}</td>" for k, _ in headline)
                       + "</tr>" for r in rows)
        parts.append(f"<h3>{escape(split)} test split</h3><table class='paper'><thead><tr>{head}</tr></thead>"
                     f"<tbody>{body}</tbody></table>")
    return "".join(parts)


def _options(values: list[str]) -> str:
    return "<option value=''>all</option>" + "".join(f"<option value='{escape(v)}'>{escape(v)}</option>" for v in values)


def render_board(entries: list[dict[str, Any]], reported: dict[str, Any], headline: tuple[tuple[str, str], ...]) -> str:
    """The whole ``index.html`` (deterministic for the same entries)."""
    per_task = [e for e in entries if e["task"] != "overall"]
    return fill(
        template("board.html"),
        style=template("style.css"),
        task_options=_options(sorted({e["task"] for e in entries})),
        track_options=_options(sorted({e["track"] for e in entries})),
        table=_table(entries, headline) if entries else "<p>No verified submission yet.</p>",
        scatter=scatter(per_task, "sanitization_attribute", "retention_attribute",
                        "Sanitization · Successful Attribute", "Retention · Successful Attribute"),
        leaks=leak_bars(per_task),
        categories=_categories(per_task),
        paper=_paper(reported, headline),
    )
