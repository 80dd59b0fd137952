"""The SPIA family's own part of the board: the SPIA paper's headline table on TAB, shown as published beside the
board, never ranked with the entries and never computed by this harness."""

from __future__ import annotations

from typing import Any

from privasis_bench.leaderboard.escaping import escape
from privasis_bench.leaderboard.family_api import PUBLISHED, BoardParts

#: SPIA's headline on TAB (best backbone per method) as its paper reports it. The paper's text is not in this
#: repository: the figures were taken from the project's SPIA contract (``docs/spia.md`` names it), which quotes the
#: paper, and are marked so on the board.
PUBLISHED_TABLE: dict[str, Any] = {
    "source": ("Oh et al., \"Subject-level PII Inference Assessment for Realistic Text Anonymization Evaluation\" "
               "(SPIA, ACL 2026, arXiv 2604.21211), headline table on TAB, best backbone per method; quoted from the "
               "project's SPIA contract, not re-checked against the paper's PDF here"),
    "columns": (("token_recall", "Token recall"), ("direct_recall", "Direct entity recall"), ("cpr", "CPR"),
                ("ipr", "IPR")),
    "rows": (
        {"method": "Longformer", "backbone": "-", "token_recall": 0.940, "direct_recall": 0.997, "cpr": 0.330,
         "ipr": 0.325},
        {"method": "DeID-GPT", "backbone": "GPT-4.1", "token_recall": 0.990, "direct_recall": 1.000, "cpr": 0.674,
         "ipr": 0.665},
        {"method": "DP-Prompt", "backbone": "Claude Sonnet", "token_recall": 0.789, "direct_recall": 0.450,
         "cpr": 0.452, "ipr": 0.446},
        {"method": "Adversarial anonymization", "backbone": "GPT-4.1", "token_recall": 0.894, "direct_recall": 1.000,
         "cpr": 0.359, "ipr": 0.365},
    ),
}


def _table_html(table: dict[str, Any]) -> str:
    cols = table["columns"]
    head = "<th>Method</th><th>Backbone</th>" + "".join(f"<th>{escape(t)}</th>" for _, t in cols)
    body = "".join("<tr><td data-label='Method'>" + escape(r["method"]) + "</td><td data-label='Backbone'>"
                   + escape(r["backbone"]) + "</td>"
                   + "".join(f"<td data-label='{escape(t)}'>{r[k]:.3f}</td>" for k, t in cols) + "</tr>"
                   for r in table["rows"])
    return (f"<div class='wide'><table class='paper'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            "</div>")


def published_html(table: dict[str, Any] = PUBLISHED_TABLE) -> str:
    """The section of ``index.html`` holding the published SPIA table."""
    return ("<section class=\"reported\" id=\"spia-paper\">\n<h2>SPIA: reported in the paper, not reproduced here</h2>\n"
            "<p>Full TAB test documents of SPIA's own split, adversary and matcher GPT-class models. This harness did "
            "not compute these figures; they are not verified, not comparable with the sample entries above, and "
            f"never ranked with them.</p>\n<p class='sub'>{escape(table['source'])}.</p>\n" + _table_html(table)
            + "\n</section>\n")


def published_markdown(table: dict[str, Any] = PUBLISHED_TABLE) -> str:
    """The same figures in ``README.md``, one line per method under their own heading (a list, not a table: the
    board's tables are the ranked ones)."""
    cols = table["columns"]
    lines = ["## SPIA: reported in the paper, not reproduced here", "",
             f"Source: {table['source']}. Not computed by this harness and never ranked with the entries above.", ""]
    lines += [f"- {r['method']}" + (f" ({r['backbone']})" if r["backbone"] != "-" else "") + ": "
              + ", ".join(f"{t} {r[k]:.3f}" for k, t in cols) for r in table["rows"]]
    return "\n".join(lines) + "\n\n"


def sections(entries: list[dict[str, Any]]) -> BoardParts:
    """The family's parts of the board: the published table (and, in ``privasis.json``, ``spia_paper_reported``)."""
    data = {k: (list(map(dict, v)) if k == "rows" else [list(c) for c in v] if k == "columns" else v)
            for k, v in PUBLISHED_TABLE.items()}
    return BoardParts(html=((PUBLISHED, published_html()),), markdown=((PUBLISHED, published_markdown()),),
                      data={"spia_paper_reported": data})
