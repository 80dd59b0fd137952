"""The replacement-quality section of the board (when it holds a replacement entry): what TRIR and TPS measure, and
the paper's Table 3 shown apart, as published and never ranked. The privacy-utility frontier of each comparable
group (TRIR across, TPS up) is drawn by the shared page beside the group's table (the family's board spec sets
``frontier``).

The ranked tables themselves are the shared ones (:mod:`privasis_bench.leaderboard.page`,
:mod:`privasis_bench.leaderboard.markdown`); only this section is the family's own (:func:`sections`). Every text a
submitter controls is escaped.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from privasis_bench.leaderboard.escaping import escape, md_cell, md_table
from privasis_bench.leaderboard.family_api import CHARTS, PUBLISHED, BoardParts

FAMILY = "tab_replacement"
#: Table 3's columns: (key in the published rows, header).
PUBLISHED_COLUMNS = (("tps", "TPS"), ("nmi", "NMI"), ("trir", "TRIR"))


def published_table3() -> dict[str, Any]:
    """The paper's Table 3 (TAB test set, its own estimators), as :mod:`privasis_bench.replacement.published` ships it."""
    from privasis_bench.replacement.published import published

    return published()


def replacement_groups(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The replacement rows of the board, one list per comparable group (entries already in board order)."""
    rows = [e for e in entries if e.get("family") == FAMILY]
    return [list(g) for _, g in groupby(rows, key=lambda e: e["group"])]


def section_html(entries: list[dict[str, Any]], reported: dict[str, Any]) -> str:
    """The section's HTML: a scatter per comparable group, then Table 3 as published ('' on a board without a
    replacement entry)."""
    if not replacement_groups(entries):
        return ""
    head = "".join(f"<th>{escape(t)} (%)</th>" for _, t in PUBLISHED_COLUMNS)
    rows = "".join("<tr><td data-label='Method'>" + escape(str(r["method"])) + "</td>"
                   + "".join(f"<td data-label='{escape(t)}'>{r[k]:.1f}</td>" for k, t in PUBLISHED_COLUMNS) + "</tr>"
                   for r in reported["rows"])
    return ("<section id='replacement'><h2>Replacement quality: the measures and the published figures</h2>"
            "<p class='sub'>TRIR: share of documents an attacker trained on background knowledge re-identifies "
            "(lower is more private); TPS: share of the text's information its replacements keep. Each comparable "
            "group's privacy-utility frontier is drawn beside its table: numbers from different estimators are "
            "never drawn or compared together.</p>"
            "<h3>As published: Table 3 of the inference-attack-guided sanitization paper, never ranked</h3>"
            f"<p class='sub'>{escape(str(reported['source']))}. {escape(str(reported['setting']))}. "
            f"{escape(str(reported['status']))}.</p>"
            f"<div class='wide'><table class='paper'><thead><tr><th>Method</th>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table></div></section>")


def section_markdown(entries: list[dict[str, Any]], reported: dict[str, Any]) -> str:
    """The section's Markdown: Table 3 as published (the scatter is in ``index.html``; '' on a board without a
    replacement entry)."""
    if not replacement_groups(entries):
        return ""
    table = md_table(["method", *(f"{t} (%)" for _, t in PUBLISHED_COLUMNS)],
                     ([r["method"], *(f"{r[k]:.1f}" for k, _ in PUBLISHED_COLUMNS)] for r in reported["rows"]))
    return ("## Replacement quality as published, not reproduced here\n\n"
            f"{md_cell(reported['source'])}: {md_cell(reported['setting'])}. These figures were not computed by this\n"
            "harness (other estimators, the full TAB test set) and are never ranked with the entries above; the\n"
            "privacy-utility scatter of the verified entries (TRIR against TPS) is in `index.html`.\n\n"
            + table + "\n")


def sections(entries: list[dict[str, Any]]) -> BoardParts:
    """The family's parts of the board: the charts section in ``index.html`` (after the charts of the families
    registered before it) and Table 3 as published in ``README.md``."""
    reported = published_table3()
    return BoardParts(html=((CHARTS, section_html(entries, reported) + "\n"),),
                      markdown=((PUBLISHED, section_markdown(entries, reported)),))
