"""``privasis-bench leaderboard verify``: check a submission trusting none of its files.

Every number is recomputed from samples.jsonl, every deterministic verdict is re-derived from the
submitted output text and judge answers (:mod:`privasis_bench.protocol.rederive`), the records and their
attributes are compared with the shipped task's data, and submission.json must agree with results.json
and with the files' hashes. Each problem is one line naming the file and the field, record or number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.data.loading import load_records
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.claims import (DerivedCounts, answer_problems, claim_problems, derive_counts,
                                               harness_problems, transport_problems)
from privasis_bench.leaderboard.ownership import folder_problems, ownership_problems
from privasis_bench.leaderboard.provenance import SCHEMA_VERSIONS, SUBMISSION_NAME, judge_pin_problems, sha256_file
from privasis_bench.leaderboard.records_check import record_problems
from privasis_bench.leaderboard.scan import scan_text
from privasis_bench.leaderboard.schema import schema_errors
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME
from privasis_bench.protocol.testee_prompt import expected_config_hash
from privasis_bench.results.rescore import rescore_task
from privasis_bench.tasks.registry import load_task

#: Fields submission.json repeats from results.json: (submission path, results path).
_MIRRORED = (
    ("task.name", "task.name"), ("task.version", "task.version"), ("task.config_hash", "task.config_hash"),
    ("dataset.ids_hash", "dataset.ids_hash"), ("dataset.limit", "dataset.limit"),
    ("model.label", "model.label"), ("model.spec", "model.spec"), ("model.rankable", "model.rankable"),
    ("judge.mode", "judge.mode"), ("judge.key", "judge.key"), ("judge.spec", "judge.spec"),
    ("judge.prompt_hashes", "judge.prompt_hashes"), ("parse_mode", "parse_mode"), ("instruction", "instruction"),
    ("testee_prompt", "testee_prompt"), ("scoring_preset", "scoring_preset"),
)


@dataclass
class Verified:
    """The verification of one submitted task folder."""

    path: Path
    submission: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    counts: DerivedCounts | None = None  # what samples.jsonl shows (failed outputs, unjudged, off-label)

    @property
    def ok(self) -> bool:
        return not self.problems


def get(data: Any, dotted: str) -> Any:
    """``data["a"]["b"]`` for ``"a.b"`` (None when any step is missing)."""
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def number_differences(stored: Any, derived: Any, path: str = "metrics") -> list[str]:
    """Every leaf where two metric trees differ, as ``path: results.json says X, samples.jsonl gives Y``."""
    if isinstance(stored, dict) and isinstance(derived, dict):
        out = []
        for key in sorted(set(stored) | set(derived), key=str):
            out += number_differences(stored.get(key), derived.get(key), f"{path}.{key}")
        return out
    if isinstance(stored, list) and isinstance(derived, list) and len(stored) == len(derived):
        out = []
        for i, (a, b) in enumerate(zip(stored, derived)):
            out += number_differences(a, b, f"{path}[{i}]")
        return out
    same = stored == derived or (isinstance(stored, (int, float)) and isinstance(derived, (int, float))
                                 and not isinstance(stored, bool) and abs(stored - derived) <= 1e-9)
    return [] if same else [f"{path}: results.json says {stored!r}, samples.jsonl gives {derived!r}"]


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{path}: missing")
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc})")
    return None


def _read_rows(path: Path, version: str, problems: list[str]) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            problems.append(f"{path}:{n}: not valid JSON ({exc})")
    for n, row in enumerate(rows, start=1):
        problems += schema_errors(row, version, f"{path}:{n}")
    return rows


def _file_checks(folder: Path, sub: dict[str, Any], problems: list[str]) -> None:
    for name in (SUBMISSION_NAME, RESULTS_NAME, SAMPLES_NAME):
        if (folder / name).is_file():
            problems += [f.describe(str(folder / name)) for f in scan_text((folder / name).read_text(encoding="utf-8"))]
    for name, digest in sorted((sub.get("files") or {}).items()):
        if (folder / name).is_file() and sha256_file(folder / name) != digest:
            problems.append(f"{folder / name}: sha256 differs from submission.json files.{name}")


def _provenance_checks(folder: Path, sub: dict[str, Any], res: dict[str, Any], problems: list[str]) -> None:
    for sub_path, res_path in _MIRRORED:
        if get(sub, sub_path) != get(res, res_path):
            problems.append(f"{folder / SUBMISSION_NAME}: {sub_path} is {get(sub, sub_path)!r} but results.json "
                            f"{res_path} is {get(res, res_path)!r}")
    if res.get("model", {}).get("rankable") is False and not sub.get("reference"):
        problems.append(f"{folder / SUBMISSION_NAME}: model reads gold labels (rankable false) but reference is not set")


def verify_submission(folder: str | Path) -> Verified:
    """Every problem of one ``submissions/<org>__<model>/<task>/`` folder (none: verified)."""
    folder = Path(folder)
    v = Verified(folder)
    sub = _read_json(folder / SUBMISSION_NAME, v.problems)
    res = _read_json(folder / RESULTS_NAME, v.problems)
    if not (folder / SAMPLES_NAME).is_file():
        v.problems.append(f"{folder / SAMPLES_NAME}: missing")
    if sub is None or res is None or not (folder / SAMPLES_NAME).is_file():
        return v
    v.submission, v.results = sub, res
    versions = sub.get("schema_versions") if isinstance(sub, dict) else None
    if versions != SCHEMA_VERSIONS:
        v.problems.append(f"{folder / SUBMISSION_NAME}: schema_versions is {versions!r}; this harness verifies "
                          f"{SCHEMA_VERSIONS!r} (re-submit with this version)")
        return v
    v.problems += schema_errors(sub, versions["submission"], str(folder / SUBMISSION_NAME))
    v.problems += schema_errors(res, versions["results"], str(folder / RESULTS_NAME))
    rows = _read_rows(folder / SAMPLES_NAME, versions["samples"], v.problems)
    if v.problems:
        return v  # later checks read fields the schemas guarantee
    v.problems += folder_problems(folder, sub)
    _file_checks(folder, sub, v.problems)
    _provenance_checks(folder, sub, res, v.problems)
    v.counts = derive_counts(rows)
    v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in claim_problems(res, v.counts)]
    v.problems += [f"{folder / SAMPLES_NAME}: {p}" for p in answer_problems(rows)]
    v.problems += [f"{folder / SUBMISSION_NAME}: {p}" for p in harness_problems(sub)]
    v.problems += [f"{folder}/{p}" for p in transport_problems(sub, res)]
    try:
        task = load_task(res["task"]["name"])
        loaded = load_records(task, limit=res["dataset"].get("limit"))
    except PrivasisError as exc:
        v.problems.append(f"{folder / RESULTS_NAME}: task.name: cannot load the task and its data ({exc})")
        return v
    expected = expected_config_hash(task, res.get("testee_prompt"))
    if res["task"].get("config_hash") != expected:
        v.problems.append(f"{folder / RESULTS_NAME}: task.config_hash {res['task'].get('config_hash')!r} is not the hash "
                          f"of the shipped task {task.task!r} with the recorded testee prompt ({expected})")
    if sub["track"] == "verified":
        v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in judge_pin_problems(task, res["judge"])]
    v.problems += record_problems(folder / SAMPLES_NAME, rows, loaded, res)
    outcome = rescore_task(folder)
    v.problems += [f"{folder / SAMPLES_NAME}: {c}" for c in outcome.contradictions]
    v.problems += [f"{folder / RESULTS_NAME}: {d}" for d in number_differences(res["metrics"], outcome.results["metrics"])]
    return v


def find_submissions(paths: Iterable[str | Path]) -> list[Path]:
    """Every folder holding a submission.json under ``paths`` (a folder itself or any depth below)."""
    found: set[Path] = set()
    for path in map(Path, paths):
        if not path.exists():
            raise PrivasisError(f"{path}: no such file or directory")
        if path.is_file():
            raise PrivasisError(f"{path}: is a file; pass a submission folder (the one holding {SUBMISSION_NAME}) "
                                "or a directory of submissions")
        found.update(p.parent for p in path.rglob(SUBMISSION_NAME))
    return sorted(found)


def verify_paths(paths: Iterable[str | Path]) -> list[Verified]:
    """Verify every submission under ``paths``, then who owns each entry (see :mod:`.ownership`)."""
    outcomes = [verify_submission(folder) for folder in find_submissions(paths)]
    ownership_problems(outcomes, lambda p: sha256_file(p / SAMPLES_NAME) if (p / SAMPLES_NAME).is_file() else None)
    return outcomes
