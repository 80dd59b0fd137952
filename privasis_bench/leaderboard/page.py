"""The static leaderboard page: a template filled with one ranked table per comparable group and inline SVG charts.

Verified and self-reported entries are separate sections; within each, one table per group of comparable rows (same
task, track and record set, see :mod:`.rows`) with a rank column, laid out by the family's board spec (columns,
digits, counts column, the line under an entry's name). Each family adds its own parts after the tables
(``FamilySpec.sections``). Every text a submitter controls is HTML-escaped. Narrow screens get one card per row.
"""

from __future__ import annotations

from importlib import resources
from itertools import groupby
from typing import Any

from privasis_bench.leaderboard.crosstask import crosstask_html, row_id
from privasis_bench.leaderboard.escaping import escape, fixed, number
from privasis_bench.leaderboard.family_api import BoardParts, board_families, family_named
from privasis_bench.leaderboard.frontier import frontier_chart
from privasis_bench.leaderboard.markdown import board_intro, rank_text, ranked_by
from privasis_bench.leaderboard.rejudge_report import summary
from privasis_bench.leaderboard.rows import TRACK_ORDER, group_title
from privasis_bench.tasks.family import BoardSpec, CountsColumn

#: The page's one script, shipped beside it; the Content-Security-Policy lets nothing else run.
SCRIPT = "board.js"
CSP = ("default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; "
       "form-action 'none'")
#: Links from ``leaderboards/index.html`` (relative: the page works from disk and on the repository host).
LINKS = (("How to submit", "../submissions/README.md"), ("Publishing and verification", "../docs/publishing.md"),
         ("Documentation", "../docs/"), ("Board data (JSON)", "privasis.json"), ("Markdown board", "README.md"))


def template(name: str) -> str:
    """A page template shipped in ``leaderboard/templates/``."""
    return resources.files("privasis_bench.leaderboard").joinpath("templates", name).read_text("utf-8")


def fill(text: str, **parts: str) -> str:
    """Replace each ``<!--@name-->`` marker of a template by its part (parts are already HTML)."""
    for key, value in parts.items():
        text = text.replace(f"<!--@{key}-->", value)
    return text


def _counts_cell(e: dict[str, Any], counts: CountsColumn) -> str:
    parts = [e.get(k) if isinstance(e.get(k), int) and not isinstance(e.get(k), bool) else None for k in counts.keys]
    total = sum(p or 0 for p in parts)
    text = "/<wbr>".join("–" if p is None else str(p) for p in parts)
    return (f"<td data-label='{escape(counts.label)}' data-v='{total}' "
            f"class='health{' partial' if total else ''}' title='{escape(counts.title)}'>{text}</td>")


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return ""


def detail_line(e: dict[str, Any], pattern: str) -> str:
    """The line under an entry's name after the model: the family's ``detail`` pattern filled with row fields (a
    missing field is empty, None is written as it is)."""
    return pattern.format_map(_Blank({k: str(v) for k, v in e.items() if not isinstance(v, (dict, list))}))


def _agreement(got: Any) -> tuple[str | None, str]:
    """A row's re-judge badge (text, class); nothing re-asked is no agreement, and the badge says so."""
    if isinstance(got, dict) and got.get("judge") is not None:
        return ((f"re-judge {got.get('agreed')}/{got.get('asked')} agree", "tag ok") if got.get("asked")
                else ("re-judge: nothing re-asked", "tag warn"))
    if isinstance(got, dict) and number(got.get("rate")) is not None:
        asked = f" of {got['asked']}" if got.get("asked") is not None else ""
        return f"re-judge agreement {got['rate']:.1f}%{asked}", "tag ok"
    return (f"re-judge agreement {got:.1f}%" if number(got) is not None else None), "tag ok"


def _entry_cell(e: dict[str, Any]) -> str:
    tags = [(e.get("label"), "tag")]
    if e.get("gold_reading") or e.get("reference"):
        tags.append(("reference: reads gold labels, never ranked", "tag warn"))
    if e.get("partial"):
        tags.append((f"partial: {e.get('records_loaded') or e['records']} of {e.get('task_records') or '?'} records", "tag warn"))
    if e.get("degenerate"):
        tags.append((f"degenerate baseline, not ranked: {e['degenerate']}", "tag warn"))
    if e.get("dominated_by"):
        names = [str(n) for n in e["dominated_by"]]
        tags.append((f"dominated by {names[0]}" if len(names) == 1 else f"dominated by {len(names)} entries", "tag"))
    got = e.get("rejudge_agreement")
    tags.append(_agreement(got))
    about = f"<div class='sub about'>{escape(str(e['about']))}</div>" if e.get("about") else ""
    tags += [(f"scoring: {e['scoring_preset']}" if e.get("scoring_preset") else None, "tag"),
             (e.get("outputs") if str(e.get("outputs")).startswith("outputs reproduced") else None, "tag ok"),
             (e.get("rejudge_note"), "tag warn")]
    notes = " ".join(f"<span class='{cls}'>{escape(str(text))}</span>" for text, cls in tags if text)
    tolerated = "".join(f"<li>{escape(t)}</li>" for t in e.get("tolerated") or [])
    version = f" · harness {escape(str(e['harness_version']))}" if e.get("harness_version") else ""
    rejudged = (f"<div class='sub rejudge'>{escape(summary(got))}</div>"
                if isinstance(got, dict) and got.get("judge") is not None and got.get("asked") else "")
    what = escape(detail_line(e, family_named(e.get("family")).board.detail))
    return (f"<td class='entry' data-label='Entry' data-v='{escape(e['name'] or '')}'><b>{escape(e['name'] or '')}</b> "
            f"{notes}<div class='sub'>{escape(str(e['model']))} · {what}{version}</div>{about}{rejudged}"
            + (f"<ul class='tolerated' title='conditions this run tolerated'>{tolerated}</ul>" if tolerated else "")
            + "".join(f"<div class='sub self-reported'>self-reported: {escape(str(t))}</div>"
                      for t in e.get("self_reported") or [])
            + "</td>")


def _standing_cell(e: dict[str, Any], board: BoardSpec) -> str:
    """The first cell: the rank, or (frontier family) the place on the frontier, or why there is none."""
    rank = e.get("rank")
    if board.frontier and e.get("frontier") is not None:
        names = e.get("dominated_by") or []
        text = "★" if e.get("frontier") else "–"
        title = ("on the frontier: no other entry is at least as good on both measures" if e.get("frontier")
                 else "dominated by " + ", ".join(str(n) for n in names))
        return (f"<td class='rank' data-label='Frontier' data-v='{0 if e.get('frontier') else len(names)}' "
                f"title='{escape(title)}'>{escape(text)}</td>")
    title = ("tied on the headline: shares this rank" if e.get("tied") else e.get("no_order") or
             (e.get("degenerate") and "degenerate baseline: never ranked") or "")
    return (f"<td class='rank' data-label='Rank' data-v='{'' if rank is None else escape(str(rank))}'"
            f"{' title=' + chr(39) + escape(str(title)) + chr(39) if title else ''}>{escape(rank_text(e))}</td>")


def _links_cell(e: dict[str, Any]) -> str:
    """Links from a row: its viewer, its submitted files, its history, and its downloads."""
    links = [("records", e.get("viewer")), ("files", e.get("files")), ("history", e.get("history"))]
    got = e.get("downloads") if isinstance(e.get("downloads"), dict) else {}
    links += [("CSV", got.get("csv")), ("JSON", got.get("json")), ("hub YAML", got.get("hub")),
              ("EEE", got.get("eee"))]
    shown = " ".join(f"<a href='{escape(str(href))}'>{escape(text)}</a>" for text, href in links if href)
    missing = got.get("missing") if isinstance(got.get("missing"), dict) else {}
    names = {"hub": "hub YAML", "eee": "EEE"}
    why = "".join(f"<span class='na' title='{escape(str(v))}'>no {escape(names.get(str(k), str(k)))}</span>"
                  for k, v in sorted(missing.items()))
    return f"<td class='link' data-label='Links'>{shown} {why}</td>"


def _row(e: dict[str, Any]) -> str:
    rank, board = e.get("rank"), family_named(e.get("family")).board
    records = escape(str(e.get("records")))
    search = " ".join(str(e.get(k) or "") for k in ("name", "model", "task", "judge", "label")).lower()
    cells = [_standing_cell(e, board), _entry_cell(e),
             f"<td data-label='{escape(board.records)}' data-v='{records}'>{records}</td>"]
    if board.counts is not None:
        cells.append(_counts_cell(e, board.counts))
    for key, title in board.columns:
        v, lo, hi = e.get(key), e.get(f"{key}_low"), e.get(f"{key}_high")
        v = number(v)
        ci = ("" if lo is None and hi is None and v is not None  # a measure without an interval (NMI)
              else f"<div class='ci'>[{fixed(lo, board.digits)}, {fixed(hi, board.digits)}]</div>")
        cells.append(f"<td data-label='{escape(title)}' data-v='{'' if v is None else v}'>{fixed(v, board.digits)}{ci}</td>")
    cells.append(_links_cell(e))
    kind = "degenerate" if e.get("degenerate") else "unranked" if rank is None and not e.get("frontier") else "ranked"
    if board.frontier and e.get("frontier") is False:
        kind = "dominated"
    return (f"<tr id='{escape(row_id(e))}' class='{kind}' data-search='{escape(search)}' "
            f"data-judge='{escape(str(e.get('judge') or ''))}'>{''.join(cells)}</tr>")


def _group_note(rows: list[dict[str, Any]], board: BoardSpec) -> str:
    """The line under a group's heading: how it is ordered, and why some rows have no rank."""
    if board.frontier:
        titles = dict(board.columns)
        (xk, _), (yk, _) = board.rank_by[:2]
        text = (f"No single rank: {titles[xk]} and {titles[yk]} pull apart. ★ marks the entries on the frontier (no "
                "other entry is at least as good on both); each other row says what dominates it.")
    else:
        text = f"Ranked by {ranked_by(board)}."
    notes = sorted({str(r["no_order"]) for r in rows if r.get("no_order")})
    if notes:
        text += f" No rank shown: {notes[0]}. " + (board.tie_hint or "Compare the other columns and the charts.")
    if any(r.get("degenerate") for r in rows):
        text += " Degenerate baselines are listed apart, never ranked (each says why)."
    return text


def _table(rows: list[dict[str, Any]]) -> str:
    first = rows[0]
    fam = family_named(first.get("family"))
    board = fam.board
    headline = ranked_by(board)
    rank_head = ("<th data-sort='num' class='rank' title='★ on the privacy-utility frontier; – dominated "
                 "(the entry says by what)'>★</th>" if board.frontier else
                 f"<th data-sort='num' class='rank' title='rank by {escape(headline)} within this table; ties share "
                 "a rank (shown as 1=)'>#</th>")
    head = [rank_head, "<th data-sort='text' class='txt entry'>Entry</th>",
            f"<th data-sort='num' class='records'>{escape(board.records)}</th>"]
    if board.counts is not None:
        head.append(f"<th data-sort='num' class='counts' title='{escape(board.counts.title)}'>"
                    f"{escape(board.counts.header)}</th>")
    head += [f"<th data-sort='num' data-key='{escape(k)}'>{escape(t)}</th>" for k, t in board.columns]
    head.append("<th class='link'>Links</th>")
    real = [e for e in rows if not e.get("degenerate")]
    apart = [e for e in rows if e.get("degenerate")]
    apart_body = (f"<tbody class='apart'><tr class='apart-head'><td colspan='{len(head)}'>Degenerate baselines, "
                  f"listed apart and never ranked</td></tr>{''.join(_row(e) for e in apart)}</tbody>" if apart else "")
    chart = frontier_chart(rows, board) if board.frontier else ""
    return (f"<div class='group' data-task='{escape(first['task'])}' data-track='{escape(first['track'] or '')}' "
            f"data-family='{escape(fam.name)}'><h3>{escape(group_title(first))}</h3>"
            f"<p class='sub'>{escape(board.unit[:1].upper() + board.unit[1:])}.</p>"
            f"<p class='order'>{escape(_group_note(rows, board))}</p>"
            + (f"<div class='frontier-chart'>{chart}</div>" if chart else "")
            + f"<div class='wide'><table class='board'><thead><tr>{''.join(head)}</tr></thead>"
            f"<tbody>{''.join(_row(e) for e in real)}</tbody>{apart_body}</table></div></div>")


def _tracks(entries: list[dict[str, Any]]) -> str:
    if not entries:
        return "<p>No verified submission yet.</p>"
    out = []
    order = {t: i for i, t in enumerate(TRACK_ORDER)}
    for track, rows in groupby(entries, key=lambda e: e["track"]):
        rows = list(rows)
        heading = (verified_heading({str(e.get("family")) for e in rows}) if track == "verified"
                   else f"{track.capitalize() if track else 'Other'}: not re-judged")
        tables = [_table(list(g)) for _, g in groupby(rows, key=lambda e: e["group"])]
        out.append((order.get(track, len(order)), f"<section class='track-{escape(track or '')}'><h2>{escape(heading)}"
                    f"</h2>{''.join(tables)}</section>"))
    return "".join(html for _, html in sorted(out, key=lambda x: x[0]))


def verified_heading(families: set[str] | None = None) -> str:
    """The verified track's heading, naming the families re-judged and those recomputed from the shipped data
    (only ``families``, the ones with entries on the board, when given)."""
    shown = [f for f in board_families() if families is None or f.name in families]
    judged = [f.board.prose_name or f.title for f in shown if f.rejudge is not None]
    recomputed = [f.board.prose_name or f.title for f in shown if f.rejudge is None]
    parts = ([f"re-judged with the task's pinned judge ({', '.join(judged)})"] if judged else []) + (
        [f"recomputed from the shipped documents ({', '.join(recomputed)})"] if recomputed else [])
    return "Verified: " + " or ".join(parts)


def options(values: list[str]) -> str:
    """The ``<option>`` list of a filter: "all", then each value (escaped)."""
    return "<option value=''>all</option>" + "".join(f"<option value='{escape(v)}'>{escape(v)}</option>" for v in values)


def _rejudge_note(rejudge: Any) -> str:
    """Where the re-judge agreement comes from ('' without a report)."""
    if not isinstance(rejudge, dict):
        return ""
    return (f" · re-judge agreement from {escape(str(rejudge.get('report')))} (each with its seed; CI re-asks the "
            "judge with that seed)")


def render_board(entries: list[dict[str, Any]], built: dict[str, Any], parts: BoardParts) -> str:
    """The whole ``index.html`` (deterministic for the same entries, build facts and family parts)."""
    links = " · ".join(f"<a href='{escape(href)}'>{escape(text)}</a>" for text, href in LINKS)
    families = [f for f in board_families() if any(e.get("family") == f.name for e in entries)]
    downloads = built.get("downloads") if isinstance(built.get("downloads"), dict) else {}
    family_links = " · ".join(
        f"{escape(f.title)}: " + " ".join(f"<a href='{escape(str(downloads[f.name][k]))}'>{k.upper()}</a>"
                                          for k in ("csv", "json") if downloads.get(f.name, {}).get(k))
        for f in families if downloads.get(f.name))
    return fill(
        template("board.html"),
        csp=CSP,
        script=SCRIPT,
        style=template("style.css"),
        intro=escape(board_intro(entries)),
        links=links,
        family_downloads=(f"<p class='sub downloads'>Download every entry of a family (one row per entry, task and "
                          f"metric): {family_links}</p>" if family_links else ""),
        family_options=options(sorted(f.name for f in families)),
        judge_options=options(sorted({str(e["judge"]) for e in entries if e.get("judge")})),
        built=f"Built {escape(str(built['date']))} (newest submission) by privasis-bench "
              f"{escape(str(built['harness_version']))}{_rejudge_note(built.get('rejudge'))}",
        task_options=options(sorted({e["task"] for e in entries})),
        track_options=options(sorted({e["track"] for e in entries if e["track"]})),
        tables=_tracks(entries),
        crosstask=crosstask_html(entries),
        sections="".join(html for _, html in parts.html),
    )
