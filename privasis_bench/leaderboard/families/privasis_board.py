"""The Privasis family's own parts of the board: the privacy-utility charts of its per-task rows (sanitization against
retention, and how leaked targets leaked) and the paper's Table 4, shown apart as published and never ranked."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from privasis_bench.leaderboard.charts import leak_bars, scatter
from privasis_bench.leaderboard.escaping import escape
from privasis_bench.leaderboard.families.privasis_row import HEADLINE
from privasis_bench.leaderboard.family_api import CHARTS, PUBLISHED, BoardParts
from privasis_bench.leaderboard.rows import OVERALL

FAMILY = "privasis"
#: After every other family's published figures in ``README.md`` (the protocol's own paper closes the page).
LAST = PUBLISHED + 5


def paper_reported() -> dict[str, Any]:
    """The paper's Table 4 numbers (shown only in their own labelled section)."""
    return json.loads(resources.files("privasis_bench.leaderboard").joinpath("paper_table4.json").read_text("utf-8"))


def _paper(reported: dict[str, Any]) -> str:
    parts = [f"<p class='sub'>{escape(reported['source'])}. Records: "
             + ", ".join(f"{escape(k)} {v}" for k, v in sorted(reported["records"].items())) + ".</p>"]
    for split, rows in sorted(reported["splits"].items(), key=lambda kv: kv[0] != "vanilla"):
        head = "<th>Model</th>" + "".join(f"<th>{escape(t)}</th>" for _, t in HEADLINE)
        body = "".join("<tr><td data-label='Model'>" + escape(r["model"]) + "</td>"
                       + "".join(f"<td data-label='{escape(t)}'>{r[k]:.2f}</td>" for k, t in HEADLINE)
                       + "</tr>" for r in rows)
        parts.append(f"<h3>{escape(split)} test split</h3><div class='wide'><table class='paper'><thead><tr>{head}"
                     f"</tr></thead><tbody>{body}</tbody></table></div>")
    return "".join(parts)


def _charts(entries: list[dict[str, Any]]) -> str:
    per_task = [e for e in entries if e["task"] != OVERALL and e.get("family") == FAMILY]
    return ("<section>\n<h2>Privacy against utility</h2>\n<div class=\"charts\">\n"
            "<div><h3>Sanitization vs retention per entry (whiskers: 95% CI)</h3>"
            + scatter(per_task, "sanitization_attribute", "retention_attribute", "Sanitization · Successful Attribute",
                      "Retention · Successful Attribute")
            + "</div>\n<div><h3>How leaked targets leaked (share of failed targets)</h3>" + leak_bars(per_task)
            + "</div>\n</div>\n</section>\n")


def _published_html(reported: dict[str, Any]) -> str:
    return ("<section class=\"reported\" id=\"paper\">\n<h2>Reported in the paper, not reproduced here</h2>\n"
            "<p>These figures come from the Privasis paper (Table 4). This harness did not compute them, they are not "
            "verified\nand they are never ranked with the entries above.</p>\n" + _paper(reported) + "\n</section>\n")


PUBLISHED_MARKDOWN = (
    "## Reported in the paper, not reproduced here\n\n"
    "Table 4 of the Privasis paper (judge GPT-OSS-120B) is shown in `index.html` in its own section. Those\n"
    "figures were not computed by this harness and are never ranked with the entries above.\n")


def sections(entries: list[dict[str, Any]]) -> BoardParts:
    """The family's parts of the board (see the module docstring); the paper's numbers also go into ``privasis.json``
    as ``paper_reported``."""
    reported = paper_reported()
    return BoardParts(html=((CHARTS, _charts(entries)), (PUBLISHED, _published_html(reported))),
                      markdown=((LAST, PUBLISHED_MARKDOWN),), data={"paper_reported": reported})
