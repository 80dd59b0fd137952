"""The Privasis-Sanitization family on the board: its verifier steps, row, content digest, viewer, re-judge and
``overall`` row (the targets :mod:`privasis_bench.protocol.family` names).

The verifier re-derives every deterministic verdict from the submitted outputs and judge answers
(:mod:`privasis_bench.protocol.rederive`), recomputes every number from ``samples.jsonl`` (the board shows and ranks
those), checks the counts the results claim, the preset and label settings, and, for a shipped task, its config
hash, the pinned judge and every record and attribute against the task's data. The re-judge re-asks the family's
``judge`` role about a seeded sample of the recorded judge decisions (:mod:`privasis_bench.leaderboard.rejudge`).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.claims import claim_problems, derive_counts
from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.families.privasis_row import entry_row, pooled_row
from privasis_bench.leaderboard.family_api import EntryInput, FamilyVerdict
from privasis_bench.leaderboard.judge_cuts import flag_problems
from privasis_bench.leaderboard.provenance import judge_pin_problems
from privasis_bench.leaderboard.records_check import record_problems
from privasis_bench.leaderboard.rejudge import Agreement, settings_for, work_problems
from privasis_bench.leaderboard.rejudge import rejudge as rejudge_sample
from privasis_bench.leaderboard.rows import OVERALL
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.metrics import compute_metrics
from privasis_bench.protocol.presets import preset_problems
from privasis_bench.protocol.row_checks import answer_cleaning_problems
from privasis_bench.protocol.testee_prompt import expected_config_hash
from privasis_bench.protocol.verdicts import SCORED_STATUSES
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME, load_sample_rows, verdicts_from_rows
from privasis_bench.results.rescore import rescore_task
from privasis_bench.tasks.config import TaskConfig

FAMILY = "privasis"
#: The role the re-judge re-asks.
ROLE = "judge"


def verify(entry: EntryInput) -> FamilyVerdict:
    """The Privasis verifier steps (see the module docstring) after the shared checks."""
    folder, res, rows = entry.folder, entry.results, entry.rows
    counts = derive_counts(rows)
    problems = [f"{folder / RESULTS_NAME}: {p}" for p in claim_problems(res, counts)]
    problems += [f"{folder / SAMPLES_NAME}: {p}" for p in answer_cleaning_problems(rows) + flag_problems(rows)]
    problems += [f"{folder / RESULTS_NAME}: {p}" for p in preset_problems(res)]  # a claimed preset, held whole
    every = None
    if not entry.custom:
        every = _task_checks(entry, problems)
    outcome = rescore_task(folder)
    problems += [f"{folder / SAMPLES_NAME}: {c}" for c in outcome.contradictions]
    return FamilyVerdict(problems=tuple(problems), metrics=outcome.results["metrics"], task_records=every,
                         counts=counts)


def _task_checks(entry: EntryInput, problems: list[str]) -> int | None:
    """Checks against the shipped task: config hash, pinned judge, and every record and attribute; returns how many
    records the task holds (None when its data cannot be read)."""
    folder, res, sub, task = entry.folder, entry.results, entry.submission, entry.task
    expected = expected_config_hash(task, res.get("testee_prompt"))
    if res["task"].get("config_hash") != expected:
        problems.append(f"{folder / RESULTS_NAME}: task.config_hash {res['task'].get('config_hash')!r} is not the hash "
                        f"of the shipped task {task.task!r} with the recorded testee prompt ({expected})")
    if sub["track"] == "verified":
        problems += [f"{folder / RESULTS_NAME}: {p}" for p in judge_pin_problems(task, res["judge"])]
    problems += [f"{folder / RESULTS_NAME}: {p}" for p in parse_mode_problems(task, res)]  # issue 50.3: pinned
    try:
        loaded, every = task_records(task, limit=res["dataset"].get("limit"), directory=entry.data_dir)
    except PrivasisError as exc:
        problems.append(f"{folder / RESULTS_NAME}: task {task.task!r}: cannot read its records ({exc})")
        return None
    problems += record_problems(folder / SAMPLES_NAME, entry.rows, loaded, dict(res))
    return every


def parse_mode_problems(task: TaskConfig, results: Mapping[str, Any]) -> list[str]:
    """One line per place ``results`` records a judge-answer parse mode other than the task's ``judge.parse_mode``: it
    decides which answers count and how, so it is the task's setting, never the run's choice (the re-judge reads
    answers in the task's mode too: :func:`~privasis_bench.leaderboard.rejudge.settings_for`)."""
    pinned = task.judge.parse_mode
    judge = results.get("judge") if isinstance(results.get("judge"), Mapping) else {}
    found = []
    for where, value in (("parse_mode", results.get("parse_mode")), ("judge.parse_mode", judge.get("parse_mode"))):
        if where == "judge.parse_mode" and "parse_mode" not in judge:
            continue  # older results record it at the top level only
        if value != pinned:
            found.append(f"{where} is {str(value)[:40]!r} but task {task.task!r} pins {pinned!r} (the parse mode is "
                         "the task's setting, not the run's: re-run without --parse-mode)")
    return found


def board_row(v: Any, task: str, viewer: str | None) -> dict[str, Any]:
    """The board row of one verified Privasis task folder, from its recomputed metrics."""
    return entry_row(v, task, v.recomputed, viewer)


def overall_row(entries: list[Any]) -> dict[str, Any] | None:
    """The ``overall`` row of one entry's verified Privasis tasks: their records pooled and bootstrapped again with
    the submitted settings (None for an entry with one task, whose row it would repeat)."""
    if len(entries) < 2:
        return None
    entries = sorted(entries, key=lambda v: v.submission["task"]["name"])
    verdicts = [vd for v in entries for vd in verdicts_from_rows(load_sample_rows(v.path))
                if vd.status in SCORED_STATUSES]
    boot = entries[0].results["metrics"]["bootstrap"]
    metrics = compute_metrics(verdicts, bootstrap_samples=boot["samples"], seed=boot["seed"],
                              confidence=boot["confidence"], top_failed=0)
    pooled = json.loads(json.dumps(metrics, allow_nan=False))
    parts = [entry_row(v, v.submission["task"]["name"], v.recomputed, None) for v in entries]
    return pooled_row(parts, entry_row(entries[0], OVERALL, pooled, None))


def rejudge(v: Any, asker: Any, *, n: int, seed: int, max_disagreements: int,
            model: str | None = None) -> tuple[Agreement | None, str | list[str]]:
    """Re-ask the ``judge`` role about ``n`` of ``v``'s judged attributes drawn with ``seed`` (the task's pinned judge
    unless ``model`` names another). ``asker`` gives a memoised batch runner for a role's model and holds the
    verifier's own model arguments and data directory. Returns the agreement and the judge's identity (never a
    transport setting), or None and the reasons when the entry is over the re-judge's work bound."""
    task = shipped_task(v.results["task"]["name"])  # verify accepted only shipped tasks for a re-judged entry
    args = asker.model_args if model else (asker.model_args or task.judge.model_args)
    spec = ModelSpec.parse(model or task.judge.model, args)
    rows = load_sample_rows(v.path)
    over = work_problems(rows, task)
    if over:
        return None, over
    loaded, _ = task_records(task, limit=v.results["dataset"].get("limit"), directory=asker.data_dir)
    memo = asker.runner(ROLE, spec, f"rejudge {str(v.submission.get('name'))[:80]} on {task.task}")
    got = rejudge_sample(rows, {r.id: r for r in loaded.records}, settings_for(task, v.results), n=n, seed=seed,
                         max_disagreements=max_disagreements, entry=f"{v.submission.get('name')}:{task.task}",
                         runner=memo, fresh=memo.fresh, prompts=JudgePrompts.load(task.judge.templates))
    return got, spec.cache_identity()
