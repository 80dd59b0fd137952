"""``privasis-bench rescore``: recompute every metric from ``samples.jsonl`` and check it against ``results.json``.

No model is called: everything comes from the two files a run wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privasis_bench.results.files import ResultsError, iter_sample_rows, load_results, task_dirs
from privasis_bench.results.record import write_run_record
from privasis_bench.tasks.family import FAMILIES, family_name, scorer_class
from privasis_bench.tasks.scoring import RowChecks


@dataclass
class Rescored:
    """One task directory after rescoring. ``matches`` is None when settings were overridden.

    ``matches`` is False when a recomputed metric or a recounted count differs; ``differences`` names each of
    them. ``contradictions``: verdicts in samples.jsonl that its recorded outputs and judge answers do not support.
    ``setting_problems``: settings results.json records that its ``scoring_preset`` does not allow (the metrics may
    still match).
    """

    task_dir: Path
    results: dict[str, Any]
    matches: bool | None
    contradictions: list[Any]
    differences: list[str] = field(default_factory=list)  # "metrics.headline.x: stored 1.0, recomputed 2.0"
    count_differences: list[str] = field(default_factory=list)  # counts and id lists samples.jsonl does not support
    setting_problems: list[str] = field(default_factory=list)  # preset settings results.json does not record
    row_problems: list[str] = field(default_factory=list)  # malformed cut_answers, judge answers not cleaned as recorded
    overridden: bool = False  # recomputed with another bootstrap setting than results.json records

    @property
    def metrics_match(self) -> bool | None:
        """Do the recomputed metrics equal results.json's (None: recomputed with other settings)?"""
        if self.matches is None or self.overridden:
            return None
        return not [d for d in self.differences if d not in self.count_differences]

    @property
    def ok(self) -> bool:
        """Nothing differs, contradicts or breaks the recorded preset."""
        return (self.matches is not False and not self.contradictions and not self.setting_problems
                and not self.row_problems)


def rescore_task(task_dir: Path, *, bootstrap_samples: int | None = None, seed: int | None = None, write: bool = False) -> Rescored:
    """Recompute the metrics of one task directory from its samples file, by its family's scorer (``rescore``,
    then ``row_checks``). ``write`` stores them in results.json; it is refused in a submission folder (published
    files are rewritten only by submitting again) and when the rows do not support what results.json records."""
    if write:
        refuse_submission_folders([task_dir])
    task_dir = Path(task_dir)
    stored = load_results(task_dir)
    old = stored.get("metrics") or {}
    boot = old.get("bootstrap") or {}
    if "samples" not in boot or "seed" not in boot:
        raise ResultsError(f"{task_dir}: results.json has no bootstrap settings to rescore with")
    name = family_name(stored)
    cls = scorer_class(name) if name in FAMILIES else None
    if cls is None or not hasattr(cls, "rescore"):
        raise ResultsError(f"{task_dir}: results.json names scorer {name!r}, which this version does not know")
    overridden = (bootstrap_samples is not None and bootstrap_samples != boot["samples"]) or (seed is not None and seed != boot["seed"])
    rows = list(iter_sample_rows(task_dir))
    metrics = cls.rescore(rows, old, bootstrap_samples=boot["samples"] if bootstrap_samples is None else bootstrap_samples,
                          seed=boot["seed"] if seed is None else seed, confidence=boot.get("confidence", 0.95))
    metrics = json.loads(json.dumps(metrics, allow_nan=False))  # the same round trip the file went through
    rederive = getattr(cls, "rederived_row_problems", None)  # a scorer without row_checks: ids, then its re-derivation
    found = (cls.row_checks(stored, rows, metrics) if hasattr(cls, "row_checks") else RowChecks(
        row_problems=shipped_document_problems(stored, rows, cls) or (rederive(stored, rows) if rederive else [])))
    metrics = metrics if found.metrics is None else found.metrics
    for refused, what in ((found.count_differences, "its counts disagree with samples.jsonl, first: "),
                          (found.row_problems, "samples.jsonl: "),
                          (found.contradictions, f"{len(found.contradictions)} verdict(s) contradict what samples.jsonl "
                                                 "records, first: ")):
        if write and refused:
            raise ResultsError(f"{task_dir}: refusing to write results.json: {what}{refused[0]}")
    differences = found.count_differences + ([] if overridden else metric_differences(old, metrics))
    matches = False if found.count_differences else (None if overridden else not differences)
    results = {k: v for k, v in stored.items() if k != "format"}
    results["metrics"] = metrics
    if write:
        write_run_record(task_dir / "results.json", results, name)
    return Rescored(task_dir, results, matches, found.contradictions, differences, found.count_differences,
                    found.setting_problems, found.row_problems, overridden)


def shipped_document_problems(stored: dict[str, Any], rows: list[dict[str, Any]], scorer_class: Any) -> list[str]:
    """For a span-scored run on data shipped with the package: a line for each samples row whose document id is not
    in that data, or appears twice (as ``leaderboard verify`` refuses them). Runs on other data are not compared."""
    from privasis_bench.errors import PrivasisError
    from privasis_bench.tasks.registry import resolve_tasks

    source = str((stored.get("dataset") or {}).get("source") or "")
    name = (stored.get("task") or {}).get("name")
    if not source.startswith("privasis_bench:tasks/") or not isinstance(name, str):
        return []
    try:
        known = {record.id for record in scorer_class(resolve_tasks([name])[0]).records()}
    except PrivasisError:
        return []  # the shipped task is not here (renamed, or another version): nothing to compare with
    problems, seen = [], set()
    for number, row in enumerate(rows, 1):
        doc = row.get("id")
        if doc not in known:
            problems.append(f"samples.jsonl row {number}: document {str(doc)[:80]!r} is not in task {name}'s data")
        elif doc in seen:
            problems.append(f"samples.jsonl row {number}: document {str(doc)[:80]!r} appears a second time")
        seen.add(doc)
    return problems


def metric_differences(stored: Any, recomputed: Any, path: str = "metrics") -> list[str]:
    """Every number (or other value) that differs between two metrics sections, named by its dotted path."""
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        out: list[str] = []
        for key in sorted(set(stored) | set(recomputed), key=str):
            if key not in stored:
                out.append(f"{path}.{key}: missing from results.json, recomputed {_short(recomputed[key])}")
            elif key not in recomputed:
                out.append(f"{path}.{key}: in results.json ({_short(stored[key])}) but not recomputed")
            else:
                out += metric_differences(stored[key], recomputed[key], f"{path}.{key}")
        return out
    if isinstance(stored, list) and isinstance(recomputed, list) and len(stored) == len(recomputed):
        return [d for i, (a, b) in enumerate(zip(stored, recomputed)) for d in metric_differences(a, b, f"{path}[{i}]")]
    if stored != recomputed:
        return [f"{path}: stored {_short(stored)}, recomputed {_short(recomputed)}"]
    return []


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."



def rescore_run(run_dir: str | Path, **kwargs: Any) -> list[Rescored]:
    """Rescore every task directory of a run (with ``write``, none is written unless all may be)."""
    dirs = task_dirs(run_dir)
    if kwargs.get("write"):
        refuse_submission_folders(dirs)
    return [rescore_task(d, **kwargs) for d in dirs]


def refuse_submission_folders(dirs: Any) -> None:
    """``rescore --write`` rewrites local runs only: a published submission folder is refused (one line)."""
    for d in dirs:
        if (Path(d) / "submission.json").is_file():
            raise ResultsError(f"{d}: is a submission folder; rescore --write only rewrites local runs "
                               "(re-run and submit again to change a published entry)")
