"""``privasis-bench submit``: copy a finished run into ``submissions/<org>__<model>/<task>/`` with its provenance."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privasis_bench.fsutil import read_text
from privasis_bench.leaderboard import naming
from privasis_bench.leaderboard.claims import DerivedCounts, finished, why_not_passed
from privasis_bench.leaderboard.entry_facts import rankable
from privasis_bench.leaderboard.naming import SubmissionError
from privasis_bench.leaderboard.preverify import unverifiable
from privasis_bench.leaderboard.provenance import (
    SUBMISSION_NAME,
    TRACKS,
    judge_pin_problems,
    portable_results,
    role_pin_problems,
    submission_record,
)
from privasis_bench.leaderboard.scan import scan_text
from privasis_bench.leaderboard.task_source import custom_inputs, shipped_task
from privasis_bench.protocol.testee_prompt import expected_config_hash
from privasis_bench.results.files import (
    RESULTS_NAME,
    SAMPLES_NAME,
    atomic_write_text,
    dumps_json,
    load_results,
    load_sample_rows,
    task_dirs,
)


def refuse_name_collisions(root: Path, name: str) -> None:
    """Refuse a name another entry under ``root`` already holds, compared folded (case, punctuation, Unicode)."""
    if not root.is_dir():
        return
    mine, folder = naming.folded(name), naming.submission_dir_name(name)
    for other in sorted(p for p in root.iterdir() if p.is_dir()):
        other_name = naming.name_of_folder(other.name)
        if other.name == folder or other_name is None:
            continue
        if naming.folded(other_name) == mine:
            raise SubmissionError(f"--name {name!r}: the entry {other_name!r} ({other}) already holds this name (names "
                                  "are compared ignoring case, punctuation and Unicode width); choose another name")


def refuse_other_owner(folder: Path, name: str, owner: str | None) -> None:
    """Refuse adding a task under a name whose existing tasks (in ``folder``) name another owner."""
    mine = owner or name.split("/")[0]
    for existing in sorted(folder.glob(f"*/{SUBMISSION_NAME}")) if folder.is_dir() else []:
        try:
            theirs = naming.owner_of(json.loads(existing.read_text(encoding="utf-8")))
        except (OSError, ValueError, AttributeError):
            continue
        if theirs is not None and theirs != mine:
            raise SubmissionError(f"--owner {mine!r}: the name {name!r} belongs to owner {theirs!r} ({existing}); a "
                                  "name belongs to whoever first added any task under it")


def check_submittable(task_dir: Path, results: dict, *, track: str, reference: bool) -> str | None:
    """Refuse, with one line, a run that cannot go on the board; returns the task's config hash (None: own task file).

    Only finished runs go on the board: every record judged, no failed model output (unless knowingly scored as
    empty with ``--score-failed-as-empty``, which the board then shows), off-label answers within the run's limit.
    """
    where = task_dir / RESULTS_NAME
    counts, checks = results.get("counts") or {}, results.get("checks") or {}
    derived = DerivedCounts(int(counts.get("failed_outputs") or 0), int(counts.get("unjudged") or 0),
                            int(counts.get("off_label") or 0))
    if not finished(derived, checks)[1] or results.get("complete") is not True or checks.get("passed") is not True:
        raise SubmissionError(f"{where}: refusing an unfinished run ({why_not_passed(derived, checks)})")
    if not rankable(results) and not reference:
        raise SubmissionError(f"{where}: model {results['model'].get('label')!r} reads gold labels (not rankable); "
                              "submit it with --reference to show it as a reference row")
    custom = custom_inputs(portable_results(results))
    if custom:
        if track == "verified":
            raise SubmissionError(f"{where}: not eligible for the verified track: the run used {', '.join(custom)} of "
                                  "its own (use --track self-reported; the files' hashes are recorded)")
        return None
    task_info = results.get("task") or {}
    task = shipped_task(task_info.get("name"))
    expected = expected_config_hash(task, results.get("testee_prompt"))
    if expected != task_info.get("config_hash"):
        raise SubmissionError(f"{where}: task.config_hash differs from the shipped task {task.task!r} "
                              f"({task_info.get('config_hash')} vs {expected}); re-run with the shipped task")
    if track == "verified":  # the judge (a span-scored task has none) and the family's pinned roles
        problems = (judge_pin_problems(task, results.get("judge") or {}) if task.judge is not None else []) + \
            role_pin_problems(results)
        if problems:
            raise SubmissionError(f"{where}: not eligible for the verified track: {problems[0]} (use --track self-reported)")
    return expected


def refuse_leaks(files: dict[str, str]) -> None:
    """Refuse any file text holding a secret-looking string or an absolute local path."""
    for name, text in files.items():
        findings = scan_text(text)
        if findings:
            more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
            raise SubmissionError(f"refusing to publish {findings[0].describe(name)}{more}")


@dataclass
class _Staged:
    out: Path
    results: dict[str, Any]
    files: dict[str, str]
    records: int
    task_hash: str


def submit_run(run_dir: str | Path, name: str, *, track: str = "self-reported", reference: bool = False,
               label: str | None = None, root: str | Path = "submissions", replace: bool = False,
               owner: str | None = None) -> list[Path]:
    """Write one submission folder per task of ``run_dir`` (all checked before any is written); returns them.

    An entry already submitted under ``name`` for a task is refused unless ``replace`` is given. Each staged folder
    is verified exactly as ``leaderboard verify`` would (:func:`.preverify.unverifiable`) before anything is
    written: submit refuses what verify would refuse, for every task family.
    """
    if track not in TRACKS:
        raise SubmissionError(f"--track must be one of {', '.join(TRACKS)}, not {track!r}")
    folder = Path(root) / naming.submission_dir_name(name)
    refuse_name_collisions(Path(root), name)
    naming.check_owner(owner)
    refuse_other_owner(folder, name, owner)
    staged: list[_Staged] = []
    for task_dir in task_dirs(run_dir):
        results = load_results(task_dir)
        task_hash = (check_submittable(task_dir, results, track=track, reference=reference)
                     or str((results.get("task") or {}).get("config_hash")))
        records = len(load_sample_rows(task_dir))  # every line a JSON object, or one line naming the bad one
        portable = portable_results(results)
        files = {RESULTS_NAME: dumps_json(portable), SAMPLES_NAME: read_text(task_dir / SAMPLES_NAME, "samples file")}
        refuse_leaks({f"{task_dir / RESULTS_NAME} (made portable)": files[RESULTS_NAME],
                      str(task_dir / SAMPLES_NAME): files[SAMPLES_NAME]})
        staged.append(_Staged(folder / results["task"]["name"], portable, files, records, task_hash))
    taken = [item.out for item in staged if (item.out / SUBMISSION_NAME).exists()]
    if taken and not replace:
        raise SubmissionError(f"{taken[0]}: an entry named {name!r} is already submitted for this task; pass --replace "
                              "to overwrite it, or choose another --name")
    for item in staged:
        hashes = {fname: hashlib.sha256(text.encode("utf-8")).hexdigest() for fname, text in item.files.items()}
        record = submission_record(item.results, name=name, track=track, reference=reference, label=label,
                                   files=hashes, records=item.records, task_hash=item.task_hash, owner=owner)
        item.files[SUBMISSION_NAME] = dumps_json(record)
        refuse_leaks({str(item.out / SUBMISSION_NAME): item.files[SUBMISSION_NAME]})
    problems = unverifiable([(item.out, item.files) for item in staged])
    if problems:
        more = f" (and {len(problems) - 1} more; `privasis-bench leaderboard verify` lists them all)" if len(problems) > 1 else ""
        raise SubmissionError(f"refusing what leaderboard verify would refuse: {problems[0]}{more}")
    for item in staged:
        for fname, text in item.files.items():
            atomic_write_text(item.out / fname, text)
    return [item.out for item in staged]
