"""The board as Markdown (``leaderboards/README.md``, what the repository host shows), every cell escaped.

A submitter controls names and labels, so no cell may break the table or inject markup: line breaks become
spaces, and every character Markdown or HTML gives a meaning to (pipes, backticks, brackets, angle brackets,
emphasis, entities, math, and the ``://`` and ``www.`` that start a bare link) is backslash-escaped, which CommonMark and GitHub render as the character.
"""

from __future__ import annotations

import re
from itertools import groupby
from typing import Any, Iterable

from privasis_bench.leaderboard.rejudge_report import REPORT_NAME, summary
from privasis_bench.leaderboard.rows import HEADLINE, group_title

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>!|~&$@])")
_AUTOLINK = re.compile(r"(?i)(www)\.|:(?=//)")
_BREAKS = re.compile(r"[\r\n\t\v\f\u0085\u2028\u2029]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def md_cell(value: Any) -> str:
    """One table cell: a single line with every Markdown/HTML special character escaped ('' for None)."""
    if value is None:
        return ""
    text = _CONTROL.sub("", _BREAKS.sub(" ", str(value))).strip()
    return _AUTOLINK.sub(lambda m: f"{m.group(1)}\\." if m.group(1) else "\\:", _SPECIAL.sub(r"\\\1", text))


def md_table(header: list[str], rows: Iterable[list[Any]]) -> str:
    """A GitHub table whose every cell (header included) goes through :func:`md_cell`."""
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.2f}"


def _row_cells(e: dict[str, Any]) -> list[Any]:
    notes = [e.get("label"), "reference (reads gold labels, never ranked)" if e.get("gold_reading") or e.get("reference")
             else None, "partial run" if e.get("partial") else None, *e.get("tolerated", [])]
    agreement = e.get("rejudge_agreement")
    if isinstance(agreement, dict) and agreement.get("judge") is not None:
        notes.append(summary(agreement))
    elif isinstance(agreement, dict) and agreement.get("rate") is not None:
        notes.append(f"re-judge agreement {agreement['rate']:.1f}%")
    elif isinstance(agreement, (int, float)):
        notes.append(f"re-judge agreement {agreement:.1f}%")
    notes += [e.get("rejudge_note"), f"scoring: {e['scoring_preset']}" if e.get("scoring_preset") else None,
              *(f"self-reported: {t}" for t in e.get("self_reported") or [])]
    if e.get("harness_version"):
        notes.append(f"harness {e['harness_version']}")
    cells: list[Any] = ["–" if e.get("rank") is None else e["rank"], e.get("name"), e.get("records")]
    cells += [f"{_num(e.get(k))} ({_num(e.get(f'{k}_low'))}–{_num(e.get(f'{k}_high'))})" for k, _ in HEADLINE]
    cells.append(" / ".join("–" if e.get(k) is None else str(e[k]) for k in
                            ("failed_outputs", "unjudged", "off_label", "cut_model_outputs", "cut_judge_answers")))
    cells.append("; ".join(str(n) for n in notes if n))
    return cells


HEADER = ["rank", "entry", "records", *(t for _, t in HEADLINE), "failed / unjudged / off-label / cut outputs / cut answers",
          "notes"]


def markdown_board(entries: list[dict[str, Any]]) -> str:
    """Every comparable group as its own section and table (entries already in board order)."""
    if not entries:
        return "_No verified submission yet._\n"
    parts = []
    for _, rows in groupby(entries, key=lambda e: e["group"]):
        rows = list(rows)
        parts.append(f"### {md_cell(group_title(rows[0]))}\n\n" + md_table(HEADER, (_row_cells(e) for e in rows)) + "\n")
    return "".join(parts)


def _rejudge_note(rejudge: Any) -> list[str]:
    """Where the re-judge agreement in the notes comes from (nothing without a report)."""
    if not isinstance(rejudge, dict):
        return []
    return [f"Re-judge agreement (in the notes) comes from `{REPORT_NAME}`, written by `privasis-bench leaderboard verify\n"
            f"... --report leaderboards/{REPORT_NAME}`, each with the seed it was re-judged with; CI re-asks the judge "
            "with that seed\n(`--check-report`) and fails when a number differs or a verified entry is missing.\n\n"]


def readme(entries: list[dict[str, Any]], rejected: list[dict[str, Any]], built: dict[str, Any]) -> str:
    """The whole ``leaderboards/README.md``."""
    parts = [
        "# leaderboards/\n\n",
        "Built by `privasis-bench leaderboard build` from the submissions in `../submissions/`: do not edit by hand\n"
        "(CI rebuilds the board and fails when this folder differs from the rebuild). Every number was recomputed from\n"
        "the submitted per-record outputs by `privasis-bench leaderboard verify`. Open `index.html` for the page with\n"
        "charts and per-record viewers; `privasis.json` holds the same data.\n\n",
        "Values are percentages with 95% bootstrap intervals over records. Entries are ranked by Full Successful Record\n"
        "only against comparable entries: the same task, track and record set. **Verified** entries were judged with\n"
        "the task's pinned judge and prompts and re-judged in CI; **self-reported** entries were not re-judged.\n"
        "Partial runs (fewer records than the task) are ranked only among themselves; a baseline that reads gold\n"
        "labels is shown for reference and never ranked. The counts column is failed model outputs / unjudged records /\n"
        "off-label judge answers / model outputs cut at the token budget / judge answers cut at the token budget.\n\n",
        "Submit with `privasis-bench submit RUN --name ORG/MODEL` and a pull request (see\n"
        "[the submission guide](../submissions/README.md) and [publishing](../docs/publishing.md));\n"
        "`seed_sample_board.sh` reproduces the seeded sample-task entries.\n\n",
        f"Built {md_cell(built['date'])} (newest submission) by privasis-bench {md_cell(built['harness_version'])}.\n\n",
        *_rejudge_note(built.get("rejudge")),
        "## Board\n\n", markdown_board(entries),
    ]
    if rejected:
        parts.append("## Rejected submissions\n\n" + "".join(f"- {md_cell(r['path'])}: {r['problems']} problem(s)\n"
                                                           for r in rejected) + "\n")
    parts.append("## Reported in the paper, not reproduced here\n\n"
                 "Table 4 of the Privasis paper (judge GPT-OSS-120B) is shown in `index.html` in its own section. Those\n"
                 "figures were not computed by this harness and are never ranked with the entries above.\n")
    return "".join(parts)
