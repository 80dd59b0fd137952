"""The board's disclosure section: per owner, how many entries it submitted, updated and withdrawn on the base
branch's history (:mod:`.history`), per entry folder its own events (each row's "history" link), and per row which shown fields are the submitter's word rather than the
verifier's computation. One function builds the data (``privasis.json``'s ``disclosure``); two render it.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.leaderboard.escaping import escape, md_cell
from privasis_bench.leaderboard.history import History

#: Row fields the board shows as the submitter wrote them (the verifier bounds them, it cannot check them).
SELF_REPORTED = {
    "label": "the submitter's note",
    "model": "the model's label (which model wrote the outputs cannot be known)",
    "harness_version": "the harness version the run names (only checked not to be newer than the verifier)",
    "tokens": "the spaCy pipeline the run records (the verifier scores with the task's own)",
}
#: What a self-reported-track row adds: its numbers were recomputed from its rows but never re-judged.
TRACK_NOTE = "judge answers (self-reported track: recomputed, never re-judged)"


def self_reported_fields(row: dict[str, Any]) -> list[str]:
    """The fields of one board row that are self-reported (see :data:`SELF_REPORTED`), plus the row's own notes."""
    fields = [k for k in SELF_REPORTED if row.get(k) not in (None, "")]
    if row.get("track") == "self-reported":
        fields.append(TRACK_NOTE)
    return fields + [f"{t}" for t in row.get("self_reported") or [] if isinstance(t, str)]


def board_disclosure(history: History, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``privasis.json``'s disclosure: owner and entry activity from git (:func:`.history.activity`), and
    self-reported fields per row."""
    per_row = [{"name": r.get("name"), "task": r.get("task"), "fields": self_reported_fields(r)}
               for r in rows if r.get("task") != "overall"]
    return {"activity": history.as_dict(), "self_reported": per_row,
            "self_reported_meaning": dict(SELF_REPORTED)}


def disclosure_markdown(data: dict[str, Any]) -> str:
    """The README section for :func:`board_disclosure`'s data."""
    owners = data["activity"]["owners"]
    parts = ["\n## Disclosure\n\n",
             "Per owner, the entries submitted, updated and withdrawn on the base branch's history (read from git,\n"
             "one step per change merged; docs/publishing.md). Every variant an owner submitted and later replaced or\n"
             "withdrew is counted here.\n\n"]
    if owners:
        parts.append("| Owner | Submitted | Updated | Withdrawn |\n|---|---:|---:|---:|\n")
        parts += [f"| {md_cell(o['owner'])} | {o['submitted']} | {o['updated']} | {o['withdrawn']} |\n" for o in owners]
    else:
        parts.append("No git history was available to this build: the counts are unknown.\n")
    entries = data["activity"].get("entries") or []
    if entries:
        parts.append("\nPer entry folder, its events by step of that history (withdrawn folders included):\n\n"
                     "| Entry | Events |\n|---|---|\n")
        parts += [f"| {md_cell(e['folder'])} | {md_cell(events_text(e['events']))} |\n" for e in entries]
    parts.append("\nSelf-reported fields (shown as submitted; the verifier bounds them but cannot check them): "
                 + "; ".join(f"`{k}`: {md_cell(v)}" for k, v in data["self_reported_meaning"].items()) + ".\n")
    return "".join(parts)


def events_text(events: list[list[Any]]) -> str:
    """One entry's events as a line: ``submitted (step 3), updated (step 9)``."""
    return ", ".join(f"{event} (step {step})" for step, event in events)


def owner_anchor(owner: str) -> str:
    """The id of an owner's line in the disclosure table."""
    return "owner-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in owner)


def entry_anchor(folder: str) -> str:
    """The id of an entry folder's line in the entry-history table (each board row's "history" link points there)."""
    return "entry-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in folder)


def disclosure_html(data: dict[str, Any]) -> str:
    """The board page's section for :func:`board_disclosure`'s data (every value escaped)."""
    owners = data["activity"]["owners"]
    body = "".join(f"<tr id='{escape(owner_anchor(o['owner']))}'><td>{escape(o['owner'])}</td><td>{o['submitted']}</td><td>{o['updated']}</td>"
                   f"<td>{o['withdrawn']}</td></tr>" for o in owners)
    table = (f"<table><thead><tr><th>Owner</th><th>Submitted</th><th>Updated</th><th>Withdrawn</th></tr></thead>"
             f"<tbody>{body}</tbody></table>" if owners else "<p>No git history was available to this build.</p>")
    entries = "".join(f"<tr id='{escape(entry_anchor(e['folder']))}'><td>{escape(e['folder'])}</td>"
                      f"<td>{escape(events_text(e['events']))}</td></tr>" for e in data["activity"].get("entries") or [])
    if entries:
        entries = ("<p>Per entry folder, its events by step of that history (withdrawn folders included):</p><table>"
                   f"<thead><tr><th>Entry</th><th>Events</th></tr></thead><tbody>{entries}</tbody></table>")
    fields = "".join(f"<li><code>{escape(k)}</code>: {escape(v)}</li>" for k, v in data["self_reported_meaning"].items())
    return (f"<section id='disclosure'><h2>Disclosure</h2><p>Per owner, entries submitted, updated and withdrawn on "
            f"the base branch's history (read from git).</p>{table}{entries}<p>Self-reported fields (shown as "
            f"submitted):</p><ul>{fields}</ul></section>\n")


def with_disclosure(page: str, data: dict[str, Any]) -> str:
    """The board page with the disclosure section placed before its closing body tag."""
    at = page.rfind("</body>")
    return page + disclosure_html(data) if at < 0 else page[:at] + disclosure_html(data) + page[at:]
