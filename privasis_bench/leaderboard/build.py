"""``privasis-bench leaderboard build``: verified submissions -> privasis.json, a markdown table and index.html.

Only submissions that pass :func:`~privasis_bench.leaderboard.verify.verify_paths` enter the board. Per task,
each entry shows its seven headline numbers with their CIs as submitted (verification recomputed them);
"overall" (shown only for an entry with more than one task) pools the records of its tasks and bootstraps again
with the submitted settings. Each entry also shows what makes it partial or non-standard: failed outputs scored as
empty, unjudged records, off-label and cut judge answers, custom judge prompts, a custom testee prompt.
Output is a pure function of the submissions: no clock, no absolute path, sorted everywhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.page import render_board
from privasis_bench.leaderboard.provenance import pinned_judge
from privasis_bench.leaderboard.verify import Verified, verify_paths
from privasis_bench.leaderboard.viewer import write_viewer
from privasis_bench.protocol.metrics import compute_metrics
from privasis_bench.results.files import atomic_write_text, dumps_json, load_sample_rows, verdicts_from_rows
from privasis_bench.leaderboard.task_source import shipped_task

BOARD_FORMAT = "privasis-bench/leaderboard/1"
HEADLINE: tuple[tuple[str, str], ...] = (
    ("full_successful_record", "Full Successful Record"),
    ("sanitization_attribute", "San. Attr"),
    ("sanitization_attribute_per_record", "San. Att/Rec"),
    ("sanitization_record", "San. Rec"),
    ("retention_attribute", "Ret. Attr"),
    ("retention_attribute_per_record", "Ret. Att/Rec"),
    ("retention_record", "Ret. Rec"),
)
OVERALL = "overall"


@dataclass(frozen=True)
class BoardFiles:
    """The files one build wrote (relative to the board directory)."""

    json: Path
    markdown: Path
    html: Path
    viewers: list[Path]


def paper_reported() -> dict[str, Any]:
    """The paper's Table 4 numbers (shown only in their own labelled section)."""
    return json.loads(resources.files("privasis_bench.leaderboard").joinpath("paper_table4.json").read_text("utf-8"))


def _entry(v: Verified, task: str, metrics: dict[str, Any], viewer: str | None) -> dict[str, Any]:
    sub = v.submission
    row: dict[str, Any] = {
        "name": sub["name"], "label": sub.get("label"), "track": sub["track"], "reference": sub["reference"],
        "task": task, "model": _model_label(sub["model"]), "judge": sub["judge"]["label"], "parse_mode": sub["parse_mode"],
        "instruction": sub["instruction"], "records": metrics["scored_records"], "limit": sub["dataset"]["limit"],
        "viewer": viewer,
    }
    for key, _ in HEADLINE:
        ci = metrics["ci"].get(key) or {}
        row.update({key: metrics["headline"].get(key), f"{key}_low": ci.get("low"), f"{key}_high": ci.get("high")})
    row.update(health(v))
    row.update(v.facts())  # verifier-derived: partial, rankable, custom_inputs, tolerated, agreement (issue 33)
    row["leaks"] = metrics["leaks"]
    row["failures_by_category"] = metrics["failures_by_category"]
    return row


def _model_label(model: dict[str, Any]) -> str:
    """The model's label, with the NER pipeline of a tool such as Presidio (``backend.spacy_model``)."""
    backend = model.get("backend") or {}
    extra = f" (spaCy {backend['spacy_model']})" if isinstance(backend, dict) and backend.get("spacy_model") else ""
    return f"{model.get('label')}{extra}"


def health(v: Verified) -> dict[str, Any]:
    """What a reader must see to know an entry is partial or non-standard (zeros and no marks for a clean one)."""
    res, sub = v.results, v.submission
    counts = v.counts
    marks = []
    if (res.get("checks") or {}).get("failed_outputs") == "scored_as_empty" and counts and counts.failed_outputs:
        marks.append("failed outputs scored as empty")
    try:
        _, shipped = pinned_judge(shipped_task(res["task"]["name"]))  # never a path from a submission
        if (res.get("judge") or {}).get("mode") != "none" and (res.get("judge") or {}).get("prompt_hashes") != shipped:
            marks.append("custom judge prompts")
    except PrivasisError:
        marks.append("custom judge prompts")
    if (res.get("testee_prompt") or {}).get("shipped") is False:
        marks.append("custom testee prompt")
    return {
        "failed_outputs": counts.failed_outputs if counts else None,
        "unjudged": counts.unjudged if counts else None,
        "off_label": counts.off_label if counts else None,
        "cut_judge_answers": int(((res.get("usage") or {}).get("judge") or {}).get("truncated") or 0),
        "harness_version": (sub.get("harness") or {}).get("version"),
        "marks": marks,
    }


def _overall(entries: list[Verified]) -> dict[str, Any]:
    verdicts = [vd for v in entries for vd in verdicts_from_rows(load_sample_rows(v.path)) if vd.status == "judged"]
    boot = entries[0].results["metrics"]["bootstrap"]
    metrics = compute_metrics(verdicts, bootstrap_samples=boot["samples"], seed=boot["seed"],
                              confidence=boot["confidence"], top_failed=0)
    return json.loads(json.dumps(metrics, allow_nan=False))


def board_table(accepted: list[Verified], viewer_links: dict[Path, str]) -> pd.DataFrame:
    """One row per (entry, task) plus one per entry for ``overall``, best Full Successful Record first."""
    rows = [_entry(v, v.submission["task"]["name"], v.results["metrics"], viewer_links.get(v.path)) for v in accepted]
    by_name: dict[str, list[Verified]] = {}
    for v in accepted:
        by_name.setdefault(v.submission["name"], []).append(v)
    for name, entries in sorted(by_name.items()):
        if len(entries) < 2:
            continue  # with one task, "overall" would repeat the task row
        entries = sorted(entries, key=lambda v: v.submission["task"]["name"])
        row = _entry(entries[0], OVERALL, _overall(entries), None)
        parts = [_entry(v, OVERALL, v.results["metrics"], None) for v in entries]
        for key in ("failed_outputs", "unjudged", "off_label", "cut_judge_answers"):
            row[key] = sum(p[key] or 0 for p in parts)
        row["marks"] = sorted({m for p in parts for m in p["marks"]})
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["limit"] = frame["limit"].astype("Int64")  # a missing limit must not turn the others into floats
    frame = frame.sort_values(["task", "full_successful_record", "name"], ascending=[True, False, True], kind="mergesort")
    return frame.reset_index(drop=True)


def markdown_table(frame: pd.DataFrame) -> str:
    """The board as a markdown table (value [low, high] per headline number)."""
    if frame.empty:
        return "_No verified submission yet._\n"
    shown = pd.DataFrame({"task": frame["task"], "entry": frame["name"], "track": frame["track"],
                          "records": frame["records"]})
    for key, title in HEADLINE:
        shown[title] = [f"{v:.2f} [{lo:.2f}, {hi:.2f}]" for v, lo, hi in
                        zip(frame[key], frame[f"{key}_low"], frame[f"{key}_high"])]
    shown["failed / unjudged / off-label / cut"] = [
        f"{f} / {u} / {o} / {c}" for f, u, o, c in
        zip(frame["failed_outputs"], frame["unjudged"], frame["off_label"], frame["cut_judge_answers"])]
    shown["note"] = ["; ".join(filter(None, [lbl, "reference" if ref else None, *marks, f"harness {ver}"]))
                     for lbl, ref, marks, ver in zip(frame["label"], frame["reference"], frame["marks"],
                                                     frame["harness_version"])]
    return shown.to_markdown(index=False) + "\n"


def _readme(frame: pd.DataFrame, rejected: list[Verified]) -> str:
    parts = [
        "# leaderboards/\n\n",
        "Built by `privasis-bench leaderboard build` from the verified submissions in `../submissions/` (do not edit by\n"
        "hand: rebuild). Every number below was recomputed from the submitted per-record outputs by\n"
        "`privasis-bench leaderboard verify`. Open `index.html` in a browser for the sortable table, charts and the\n"
        "per-record viewers. Percentages with 95% bootstrap intervals over records; an `overall` row pools the tasks of an\n"
        "entry that has more than one. `failed / unjudged / off-label / cut` counts failed model outputs, unjudged\n"
        "records, off-label judge answers and judge answers cut at the token budget (all zero for a clean entry).\n\n",
        "How entries get here: `privasis-bench submit RUN --name ORG/MODEL`, a pull request adding the folder under\n"
        "`submissions/` (see its README), CI's `privasis-bench leaderboard verify`, then `privasis-bench leaderboard build`.\n"
        "`seed_sample_board.sh` reproduces the seeded sample-task entries.\n\n",
        "## Board\n\n", markdown_table(frame), "\n",
    ]
    if rejected:
        parts.append("## Rejected submissions\n\n" + "".join(f"- `{v.path.as_posix()}`: {len(v.problems)} problem(s)\n"
                                                           for v in rejected) + "\n")
    parts.append("## Reported in the paper, not reproduced here\n\n"
                 "Table 4 of the Privasis paper (judge GPT-OSS-120B) is shown in `index.html` in its own section. Those\n"
                 "figures were not computed by this harness and are never ranked with the entries above.\n")
    return "".join(parts)


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.name


def build_board(submissions: str | Path = "submissions", out_dir: str | Path = "leaderboards") -> BoardFiles:
    """Verify every submission, then write the board files and one viewer page per accepted submission."""
    submissions, out_dir = Path(submissions), Path(out_dir)
    if not submissions.is_dir():
        raise PrivasisError(f"--submissions-dir {submissions}: not a directory")
    outcomes = verify_paths([submissions])
    if not outcomes:
        raise PrivasisError(f"no submission found under {submissions} (a submission folder holds submission.json; "
                            "publish a run with `privasis-bench submit RUN --name ORG/MODEL`)")
    accepted = [v for v in outcomes if v.ok]
    rejected = [v for v in outcomes if not v.ok]
    viewers: dict[Path, str] = {}
    for v in accepted:
        rel = Path("view") / _relative(v.path, submissions).replace("/", "__")
        page = write_viewer(v.path, out_dir / rel.with_suffix(".html"), title=f"{v.submission['name']} on "
                            f"{v.submission['task']['name']}")
        viewers[v.path] = page.relative_to(out_dir).as_posix()
    frame = board_table(accepted, viewers)
    records = json.loads(frame.to_json(orient="records")) if not frame.empty else []
    board = {
        "format": BOARD_FORMAT,
        "entries": records,
        "rejected": [{"path": _relative(v.path, submissions), "problems": len(v.problems)} for v in rejected],
        "paper_reported": paper_reported(),
    }
    files = BoardFiles(out_dir / "privasis.json", out_dir / "README.md", out_dir / "index.html",
                       sorted(out_dir / p for p in viewers.values()))
    atomic_write_text(files.json, dumps_json(board))
    atomic_write_text(files.markdown, _readme(frame, rejected))
    atomic_write_text(files.html, render_board(records, board["paper_reported"], HEADLINE))
    return files
