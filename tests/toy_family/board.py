"""The toy family's board code (test tree only), written against the generic interfaces alone
(:mod:`privasis_bench.leaderboard.family_api`):

* the verifier recomputes ``protected`` from the recorded attacker answers and the cities the task's own data holds
  (never from a submission's claim), with the scorer's own metric code;
* the re-judge re-asks the ``attacker`` role (the task's pinned attacker) about a seeded sample of notes and compares
  each fresh decision with the recorded one;
* the row shows the recomputed number; the viewer lists each note's rewrite and the attacker's guess.
"""

from __future__ import annotations

import html
import random
from pathlib import Path
from typing import Any

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.leaderboard.family_api import EntryInput, FamilyVerdict
from privasis_bench.leaderboard.rejudge import Agreement
from privasis_bench.leaderboard.scored_content import digest
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.results.files import atomic_write_text, load_results, load_sample_rows
from tests.toy_family.scorer import ToyScorer, attack_request, named, notes

ROLE = "attacker"


def cities(task: Any) -> dict[str, str]:
    """Note id -> city, from the task's own data file."""
    return {n["id"]: n["city"] for n in notes(task)}


def verify(entry: EntryInput) -> FamilyVerdict:
    """Re-derive every recorded decision from its answer, then the metrics from the re-derived rows."""
    held, where = cities(entry.task), entry.folder / "samples.jsonl"
    problems, rows = [], []
    for row in entry.rows:
        rid = str(row.get("id"))
        if rid not in held:
            problems.append(f"{where}: {rid!r} is not a note of the task")
            continue
        derived = None if not row.get("scored") else not named(held[rid], str(row.get("guess")))
        if row.get("protected") is not derived:
            problems.append(f"{where}: note {rid}: protected is {row.get('protected')!r} but its guess gives {derived}")
        rows.append({**row, "protected": derived})
    problems += [f"{where}: note {r}: no samples row" for r in held if r not in {x["id"] for x in rows}]
    boot = entry.results["metrics"].get("bootstrap") or {}
    metrics = ToyScorer.rescore(rows, {}, bootstrap_samples=boot.get("samples"), seed=boot.get("seed"),
                                confidence=boot.get("confidence"))
    scored = metrics["scored_documents"]
    facts = {"scored_records": scored, "records_of_task": len(held), "partial": scored < len(held)}
    return FamilyVerdict(problems=tuple(problems), metrics=metrics, facts=facts, task_records=len(held))


def content(rows: list[dict[str, Any]], results: dict[str, Any] | None = None) -> str:
    """The digest of what the toy scores: per note the rewrite and the attacker's answer."""
    return digest(sorted([str(r.get("id")), r.get("output"), r.get("guess")] for r in rows))


def board_row(v: Any, task: str, viewer: str | None) -> dict[str, Any]:
    """The toy's board row, from the verifier's recomputed metrics and facts."""
    sub, facts, m = v.submission, v.facts(), v.recomputed
    return {"name": str(sub["name"]), "label": sub.get("label"), "track": sub["track"], "task": task,
            "model": str((v.results.get("model") or {}).get("label")), "judge": None, "span_source": "attacker guesses",
            "records": facts.get("scored_records"), "records_loaded": facts.get("scored_records"),
            "task_records": facts.get("records_of_task"), "limit": None, "record_set": "toy",
            "partial": bool(facts.get("partial")), "gold_reading": False, "reference": False, "rankable": True,
            "rejudge_agreement": v.agreement, "viewer": viewer, "tolerated": [], "marks": [],
            "protected": None if m["protected"] is None else 100 * m["protected"]}


def write_viewer(task_dir: Path, out: Path, title: str | None = None, back: str | None = None,
                 metrics: dict[str, Any] | None = None) -> Path:
    """One line per note: the rewrite and the attacker's guess, under the protected share (the verifier's
    recomputed one when ``metrics`` is given)."""
    res, rows = load_results(task_dir), load_sample_rows(task_dir)
    rate = (metrics if metrics is not None else res["metrics"]).get("protected")
    items = "".join(f"<li>{html.escape(str(r.get('output')))} → {html.escape(str(r.get('guess')))}</li>" for r in rows)
    page = (f"<!doctype html><title>{html.escape(title or res['task']['name'])}</title>"
            f"<h1>toy attacker view</h1><p>protected {html.escape(str(rate))}</p><ul>{items}</ul>")
    atomic_write_text(out, page)
    return Path(out)


def rejudge(v: Any, asker: Any, *, n: int, seed: int, max_disagreements: int,
            model: str | None = None) -> tuple[Agreement | None, str | list[str]]:
    """Re-ask the ``attacker`` role (the task's pinned attacker unless ``model`` names another) about ``n`` scored notes
    drawn with ``seed``; a note agrees when the fresh answer decides ``protected`` as the recorded one did."""
    task = shipped_task(v.results["task"]["name"])
    spec = ModelSpec.parse(model or task.scorer_args[ROLE], asker.model_args)
    rows = [r for r in load_sample_rows(v.path) if r.get("scored")]
    chosen = random.Random(f"{seed}:{v.submission.get('name')}").sample(rows, min(n, len(rows)))
    run = asker.runner(ROLE, spec, f"rejudge {v.submission.get('name')} on {task.task}")
    answers = run([attack_request(str(r.get("output"))) for r in chosen])
    held = cities(task)
    got = Agreement(seed=seed, sample_size=n, pool=len(rows), asked=len(chosen), max_disagreements=max_disagreements)
    for row, answer in zip(chosen, answers):
        same = answer.text is not None and (not named(held[str(row["id"])], answer.text)) == bool(row.get("protected"))
        got.agreed += same
        counts = got.by_kind.setdefault(ROLE, [0, 0])
        counts[0] += 1
        counts[1] += same
        if not same:
            got.disagreements.append(f"note {row['id']}: recorded guess {row.get('guess')!r}, re-asked {answer.text!r}")
    return got, spec.cache_identity()
