"""``privasis-bench leaderboard verify``: check a submission trusting none of its files.

One path for every task family. The shared checks run once for every entry: file sizes and parsing, the family's
schemas, submission.json against results.json and the files' hashes, the task (shipped, or held to the family's
reference task), bounds, folder ownership, free text, harness, transport and labels. Then the family's verifier
(``FamilySpec.verifier``) recomputes the entry and returns a frozen :class:`~.family_api.FamilyVerdict`; this module
records it on the :class:`Verified` entry and compares the submitted metrics with the recomputed ones (within the
family's tolerance). The board shows and ranks the recomputed metrics only. Each problem is one line naming the file
and the field, record or number.
"""

from __future__ import annotations

import copy
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.bounds import (
    MAX_JSON_BYTES,
    MAX_SAMPLES_BYTES,
    bootstrap_problems,
    parse_json,
    parse_rows,
    read_text,
    text_problems,
)
from privasis_bench.leaderboard.claims import harness_problems, label_problems, transport_problems
from privasis_bench.leaderboard.entry_facts import board_facts, rankable
from privasis_bench.leaderboard.family_api import (
    EntryInput,
    FamilyVerdict,
    UnknownFamily,
    family_of,
    leaf_differences,
    short,
)
from privasis_bench.leaderboard.ownership import folder_problems, ownership_problems
from privasis_bench.leaderboard.provenance import SUBMISSION_NAME
from privasis_bench.leaderboard.scan import scan_text
from privasis_bench.leaderboard.task_source import UnknownTask, custom_inputs, shipped_task
from privasis_bench.leaderboard.text_bounds import free_text_problems
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME
from privasis_bench.results.schema import BUILTIN, schema_errors
from privasis_bench.tasks.config import TASK_NAME

#: Fields submission.json repeats from results.json: (submission path, results path).
_MIRRORED = (
    ("task.name", "task.name"), ("task.version", "task.version"), ("task.config_hash", "task.config_hash"),
    ("dataset.ids_hash", "dataset.ids_hash"), ("dataset.limit", "dataset.limit"),
    ("model.label", "model.label"), ("model.spec", "model.spec"), ("model.rankable", "model.rankable"),
    ("judge.mode", "judge.mode"), ("judge.key", "judge.key"), ("judge.spec", "judge.spec"),
    ("judge.prompt_hashes", "judge.prompt_hashes"), ("parse_mode", "parse_mode"), ("instruction", "instruction"),
    ("testee_prompt", "testee_prompt"), ("scoring_preset", "scoring_preset"), ("judge.label", "judge.label"),
    ("model.backend", "model.backend"),  # the board shows these two: never free text of submission.json's own
)


@dataclass
class Verified:
    """The verification of one submitted task folder."""

    path: Path
    submission: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    counts: Any = None  # the family's derived counts (Privasis: failed outputs, unjudged, off-label)
    custom: list[str] = field(default_factory=list)  # inputs of the user's own (task file, data files, judge prompts)
    task_records: int | None = None  # records the whole shipped task holds (None: not read)
    agreement: dict[str, Any] | None = None  # the re-judge's outcome (see rejudge.Agreement.as_dict)
    content: str | None = None  # digest of what the board scores (the family's ``content``)
    family: str | None = None  # the task family (its scorer's name, see tasks.family; None until results.json is read)
    family_facts: dict[str, Any] = field(default_factory=dict)  # facts the family's verifier derived
    rejudge_note: str | None = None  # why the board shows no re-judge agreement (see rejudge_report.not_rejudged)
    recomputed: dict[str, Any] | None = None  # the metrics the family's verifier recomputed (what the board shows)

    @property
    def ok(self) -> bool:
        return not self.problems

    def facts(self) -> dict[str, Any]:
        """The per-entry fields the board data carries (see :mod:`.entry_facts`)."""
        return {**board_facts(results=self.results, counts=self.counts, task_records=self.task_records,
                              custom=self.custom, agreement=self.agreement), **self.family_facts}


def get(data: Any, dotted: str) -> Any:
    """``data["a"]["b"]`` for ``"a.b"`` (None when any step is missing)."""
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def number_differences(stored: Any, derived: Any, path: str = "metrics", tolerance: float = 1e-9) -> list[str]:
    """Every leaf where two metric trees differ, as ``path: results.json says X, samples.jsonl gives Y`` (numbers
    within ``tolerance`` agree)."""
    return [f"{where}: results.json says {a!r}, samples.jsonl gives {b!r}"
            for where, a, b in leaf_differences(stored, derived, path, tolerance)]


def _rows_schema_errors(rows: list[dict[str, Any]], version: str, where: Path, schema_dir: str) -> list[str]:
    problems: list[str] = []
    for n, row in enumerate(rows, start=1):
        problems += schema_errors(row, version, f"{where}:{n}", schema_dir=schema_dir)
        if len(problems) > 20:
            return problems[:20] + [f"{where}: (more schema problems not shown)"]
    return problems


def _file_checks(folder: Path, sub: dict[str, Any], texts: dict[str, str], problems: list[str]) -> None:
    for name, text in texts.items():
        problems += [f.describe(str(folder / name)) for f in scan_text(text)]
    for name, digest in sorted((sub.get("files") or {}).items()):
        if name not in texts:
            continue  # only the files verify reads are hashed (an extra name is a schema matter)
        if hashlib.sha256(texts[name].encode("utf-8")).hexdigest() != digest:
            problems.append(f"{folder / name}: sha256 differs from submission.json files.{name}")


def _provenance_checks(folder: Path, sub: dict[str, Any], res: dict[str, Any], problems: list[str]) -> None:
    for sub_path, res_path in _MIRRORED:
        if get(sub, sub_path) != get(res, res_path):
            problems.append(f"{folder / SUBMISSION_NAME}: {sub_path} is {short(get(sub, sub_path))} but results.json "
                            f"{res_path} is {short(get(res, res_path))}")
    if not rankable(res) and not sub.get("reference"):
        problems.append(f"{folder / SUBMISSION_NAME}: model reads gold labels (its spec or rankable false) but "
                        "reference is not set")


def verify_submission(folder: str | Path, *, data_dir: str | Path | None = None) -> Verified:
    """Every problem of one ``submissions/<org>__<model>/<task>/`` folder (none: verified).

    Never raises: a file that cannot be read or an unexpected error is one problem line naming the folder, so one
    broken entry never stops the others.
    """
    v = Verified(Path(folder))
    try:
        _verify(v, data_dir)
    except Exception as exc:  # noqa: BLE001 - isolate every entry; the line names it and the error
        v.problems.append(f"{v.path}: cannot be verified ({type(exc).__name__}: {str(exc)[:200]})")
    return v


def _verify(v: Verified, data_dir: str | Path | None) -> None:
    folder = v.path
    texts: dict[str, str] = {}
    for name, limit in ((SUBMISSION_NAME, MAX_JSON_BYTES), (RESULTS_NAME, MAX_JSON_BYTES), (SAMPLES_NAME, MAX_SAMPLES_BYTES)):
        text = read_text(folder / name, limit, v.problems)
        if text is not None:
            texts[name] = text
    if v.problems:
        return
    sub = parse_json(texts[SUBMISSION_NAME], str(folder / SUBMISSION_NAME), v.problems)
    res = parse_json(texts[RESULTS_NAME], str(folder / RESULTS_NAME), v.problems)
    rows = parse_rows(texts[SAMPLES_NAME], folder / SAMPLES_NAME, v.problems)
    if v.problems:
        return
    for name, data in ((SUBMISSION_NAME, sub), (RESULTS_NAME, res)):
        if not isinstance(data, dict):
            v.problems.append(f"{folder / name}: must be a JSON object, not {type(data).__name__}")
    if v.problems:
        return
    v.submission, v.results = sub, res
    try:
        fam = family_of(res)
    except UnknownFamily as exc:
        v.problems.append(f"{folder / RESULTS_NAME}: {exc}")
        return
    v.family, v.content = fam.name, fam.call("content", rows, res)
    versions = sub.get("schema_versions")
    if versions != dict(fam.schema_versions):
        v.problems.append(f"{folder / SUBMISSION_NAME}: schema_versions is {str(versions)[:200]}; this harness verifies "
                          f"{dict(fam.schema_versions)!r} for {fam.name} entries (re-submit with this version)")
        return
    schemas = str(fam.extra.get("schema_dir", BUILTIN))  # where the family keeps its schemas (as the writer reads it)
    v.problems += schema_errors(sub, versions["submission"], str(folder / SUBMISSION_NAME), schema_dir=schemas)
    v.problems += schema_errors(res, versions["results"], str(folder / RESULTS_NAME), schema_dir=schemas)
    v.problems += _rows_schema_errors(rows, versions["samples"], folder / SAMPLES_NAME, schemas)
    if v.problems:
        return  # later checks read fields the schemas guarantee
    if not TASK_NAME.fullmatch(str(res["task"]["name"])):
        v.problems.append(f"{folder / RESULTS_NAME}: task.name {str(res['task']['name'])[:80]!r} is not a plain task name")
        return
    v.custom = custom_inputs(res)
    if "custom_inputs" in sub and sub["custom_inputs"] != v.custom:
        v.problems.append(f"{folder / SUBMISSION_NAME}: custom_inputs is {str(sub['custom_inputs'])[:120]} but "
                          f"results.json's file references give {v.custom}")
    try:
        task = shipped_task(res["task"]["name"])
    except UnknownTask as exc:
        if not v.custom:
            v.problems.append(f"{folder / RESULTS_NAME}: task.name: {exc}")
            return
        task = shipped_task(fam.reference_task)  # held to the official task's limits
    if task.scorer != fam.name:  # the family follows the task, never a results file's claim alone
        v.problems.append(f"{folder / RESULTS_NAME}: the run is scored as {fam.name} but task {task.task!r} uses the "
                          f"{task.scorer} scorer")
        return
    bounded = bootstrap_problems(res, task) + text_problems(rows, task)
    if bounded:
        v.problems += [f"{folder / (RESULTS_NAME if p.startswith('metrics') else SAMPLES_NAME)}: {p}" for p in bounded]
        return  # never spend unbounded work on an entry
    v.problems += folder_problems(folder, sub)
    _file_checks(folder, sub, texts, v.problems)
    _provenance_checks(folder, sub, res, v.problems)
    v.problems += free_text_problems(folder, sub, res)
    v.problems += [f"{folder / SUBMISSION_NAME}: {p}" for p in harness_problems(sub)]
    v.problems += [f"{folder}/{p}" for p in transport_problems(sub, res)]
    v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in label_problems(res)]
    if v.custom and sub["track"] == "verified":
        v.problems.append(f"{folder / SUBMISSION_NAME}: track is verified but the run used {', '.join(v.custom)} "
                          "of its own (only self-reported; the verifier checks shipped tasks and data)")
    entry = EntryInput(folder=folder, submission=sub, results=res, rows=rows, task=task, custom=tuple(v.custom),
                       data_dir=Path(data_dir) if data_dir is not None else None)
    record_verdict(v, fam.call("verifier", entry), fam.board.tolerance)


def record_verdict(v: Verified, verdict: FamilyVerdict, tolerance: float) -> None:
    """Record a family verifier's verdict on the entry: its problems, derived facts and counts, the recomputed metrics,
    and every submitted number that differs from them (beyond ``tolerance``)."""
    if not isinstance(verdict, FamilyVerdict):
        raise TypeError(f"the {v.family} family's verifier returned {type(verdict).__name__}, not a FamilyVerdict")
    v.problems += list(verdict.problems)
    v.family_facts = dict(verdict.facts)
    v.task_records, v.counts = verdict.task_records, verdict.counts
    if verdict.metrics is None:
        if not verdict.problems:  # the board shows recomputed numbers only: none, no place on it
            v.problems.append(f"{v.path / RESULTS_NAME}: metrics: the {v.family} verifier recomputed none")
        return
    v.recomputed = copy.deepcopy(dict(verdict.metrics))  # a copy no family code holds
    v.problems += [f"{v.path / RESULTS_NAME}: {d}" for d in number_differences(v.results["metrics"], v.recomputed,
                                                                              tolerance=tolerance)]


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


def verify_paths(paths: Iterable[str | Path], *, data_dir: str | Path | None = None,
                 progress: Callable[[str], None] | None = None) -> list[Verified]:
    """Verify every submission under ``paths``, then who owns each entry (see :mod:`.ownership`); ``progress``
    is told each entry before it is verified, with its position and the seconds spent so far."""
    paths = [Path(p) for p in paths]
    folders, started = find_submissions(paths), time.monotonic()
    outcomes = []
    for n, folder in enumerate(folders, start=1):
        if progress is not None:
            progress(f"verifying {n}/{len(folders)}: {folder} ({time.monotonic() - started:.0f} s so far)")
        outcomes.append(verify_submission(folder, data_dir=data_dir))
    withdrawn = ownership_problems(outcomes, paths)  # a base entry the change deletes without being its owner
    return outcomes + [Verified(folder, problems=[problem]) for folder, problem in withdrawn]


def verify_report(outcomes: Iterable[Verified], seed: int | None) -> dict[str, Any]:
    """Every entry's outcome as JSON: path, name, task, ok, problems and its board facts (see :meth:`Verified.facts`)."""
    entries = []
    for v in outcomes:
        entries.append({"path": v.path.as_posix(), "name": v.submission.get("name"),
                        "task": (v.submission.get("task") or {}).get("name"), "track": v.submission.get("track"),
                        "ok": v.ok, "problems": v.problems, **(v.facts() if v.results else {})})
    return {"format": "privasis-bench/verify-report/1", "rejudge_seed": seed, "entries": entries}
