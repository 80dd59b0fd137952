"""``privasis-bench leaderboard verify``: check a submission trusting none of its files.

Every number is recomputed from samples.jsonl, every deterministic verdict is re-derived from the
submitted output text and judge answers (:mod:`privasis_bench.protocol.rederive`), the records and their
attributes are compared with the shipped task's data, and submission.json must agree with results.json
and with the files' hashes. Each problem is one line naming the file and the field, record or number.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.bounds import (MAX_JSON_BYTES, MAX_SAMPLES_BYTES, bootstrap_problems, parse_json,
                                               parse_rows, read_text, text_problems)
from privasis_bench.leaderboard.claims import (DerivedCounts, answer_problems, claim_problems, derive_counts,
                                               harness_problems, label_problems, transport_problems)
from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.entry_facts import board_facts, rankable
from privasis_bench.leaderboard.families import Family, UnknownFamily, family_of
from privasis_bench.leaderboard.text_bounds import free_text_problems
from privasis_bench.leaderboard.judge_cuts import flag_problems
from privasis_bench.leaderboard.ownership import folder_problems, ownership_problems
from privasis_bench.leaderboard.provenance import SUBMISSION_NAME, judge_pin_problems
from privasis_bench.leaderboard.records_check import record_problems
from privasis_bench.leaderboard.scan import scan_text
from privasis_bench.leaderboard.parse_pin import parse_mode_problems
from privasis_bench.leaderboard.setting_claims import setting_problems
from privasis_bench.leaderboard.schema import schema_errors
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME
from privasis_bench.protocol.testee_prompt import expected_config_hash
from privasis_bench.leaderboard.task_source import UnknownTask, custom_inputs, shipped_task
from privasis_bench.results.rescore import rescore_task
from privasis_bench.tasks.config import TASK_NAME, TaskConfig

#: The shipped task whose limits (budgets, bootstrap settings) bind an entry made with a task file of its own.
REFERENCE_TASK = "privasis_vanilla"
#: The same, per task family (see :mod:`.families`).
REFERENCE_TASKS = {"privasis": REFERENCE_TASK, "tab": "tab_test", "tab_replacement": "tab_replacement_sample"}

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
    custom: list[str] = field(default_factory=list)  # inputs of the user's own (task file, data files, judge prompts)
    task_records: int | None = None  # records the whole shipped task holds (None: not read)
    agreement: dict[str, Any] | None = None  # the re-judge's outcome (see rejudge.Agreement.as_dict)
    content: str | None = None  # digest of what the board scores (see scored_content)
    family: str = "privasis"  # the task family (its scorer; see families)
    family_facts: dict[str, Any] = field(default_factory=dict)  # facts the family's recompute derived
    rejudge_note: str | None = None  # why the board shows no re-judge agreement (see rejudge_report.not_rejudged)

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
    if isinstance(stored, dict) and isinstance(derived, dict):
        out = []
        for key in sorted(set(stored) | set(derived), key=str):
            out += number_differences(stored.get(key), derived.get(key), f"{path}.{key}", tolerance)
        return out
    if isinstance(stored, list) and isinstance(derived, list) and len(stored) == len(derived):
        out = []
        for i, (a, b) in enumerate(zip(stored, derived)):
            out += number_differences(a, b, f"{path}[{i}]", tolerance)
        return out
    same = stored == derived or (isinstance(stored, (int, float)) and isinstance(derived, (int, float))
                                 and not isinstance(stored, bool) and abs(stored - derived) <= tolerance)
    return [] if same else [f"{path}: results.json says {stored!r}, samples.jsonl gives {derived!r}"]


def _rows_schema_errors(rows: list[dict[str, Any]], version: str, where: Path) -> list[str]:
    problems: list[str] = []
    for n, row in enumerate(rows, start=1):
        problems += schema_errors(row, version, f"{where}:{n}")
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
            problems.append(f"{folder / SUBMISSION_NAME}: {sub_path} is {get(sub, sub_path)!r} but results.json "
                            f"{res_path} is {get(res, res_path)!r}")
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
    v.problems += schema_errors(sub, versions["submission"], str(folder / SUBMISSION_NAME))
    v.problems += schema_errors(res, versions["results"], str(folder / RESULTS_NAME))
    v.problems += _rows_schema_errors(rows, versions["samples"], folder / SAMPLES_NAME)
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
        task = shipped_task(REFERENCE_TASKS.get(fam.name, REFERENCE_TASK))  # held to the official task's limits
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
    if fam.recompute is not None:
        _family_checks(v, fam, task, rows)
        return
    v.counts = derive_counts(rows)
    v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in claim_problems(res, v.counts)]
    v.problems += [f"{folder / SAMPLES_NAME}: {p}" for p in answer_problems(rows) + flag_problems(rows)]
    v.problems += [f"{folder / SUBMISSION_NAME}: {p}" for p in harness_problems(sub)]
    v.problems += [f"{folder}/{p}" for p in transport_problems(sub, res)]
    v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in label_problems(res)]
    v.problems += setting_problems(folder, sub, res)  # preset, mirrored labels, label bound (see setting_claims)
    if v.custom:
        if sub["track"] == "verified":
            v.problems.append(f"{folder / SUBMISSION_NAME}: track is verified but the run used {', '.join(v.custom)} "
                              "of its own (only self-reported; the verifier checks shipped tasks and data)")
    else:
        _task_checks(v, task, rows, data_dir)
    outcome = rescore_task(folder)
    v.problems += [f"{folder / SAMPLES_NAME}: {c}" for c in outcome.contradictions]
    v.problems += [f"{folder / RESULTS_NAME}: {d}" for d in number_differences(res["metrics"], outcome.results["metrics"])]


def _family_checks(v: Verified, fam: Family, task: TaskConfig, rows: list[dict[str, Any]]) -> None:
    """A family with its own recompute (see :mod:`.families`): shared metadata checks, then its numbers again."""
    folder, res, sub = v.path, v.results, v.submission
    v.problems += [f"{folder / SUBMISSION_NAME}: {p}" for p in harness_problems(sub)]
    v.problems += [f"{folder}/{p}" for p in transport_problems(sub, res)]
    v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in label_problems(res)]
    if v.custom and sub["track"] == "verified":
        v.problems.append(f"{folder / SUBMISSION_NAME}: track is verified but the run used {', '.join(v.custom)} "
                          "of its own (only self-reported; the verifier checks shipped tasks and data)")
    elif not v.custom and res["task"].get("config_hash") != task.config_hash():
        v.problems.append(f"{folder / RESULTS_NAME}: task.config_hash {res['task'].get('config_hash')!r} is not the "
                          f"hash of the shipped task {task.task!r} ({task.config_hash()})")
    problems, metrics = fam.call("recompute", v, task, rows, bool(v.custom))
    v.problems += [f"{folder / SAMPLES_NAME}: {p}" for p in problems]
    if metrics is not None:
        v.problems += [f"{folder / RESULTS_NAME}: {d}" for d in number_differences(res["metrics"], metrics,
                                                                                  tolerance=fam.tolerance)]


def _task_checks(v: Verified, task: TaskConfig, rows: list[dict[str, Any]], data_dir: str | Path | None) -> None:
    """Checks against the shipped task: config hash, pinned judge, and every record and attribute."""
    folder, res, sub = v.path, v.results, v.submission
    expected = expected_config_hash(task, res.get("testee_prompt"))
    if res["task"].get("config_hash") != expected:
        v.problems.append(f"{folder / RESULTS_NAME}: task.config_hash {res['task'].get('config_hash')!r} is not the hash "
                          f"of the shipped task {task.task!r} with the recorded testee prompt ({expected})")
    if sub["track"] == "verified":
        v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in judge_pin_problems(task, res["judge"])]
    v.problems += [f"{folder / RESULTS_NAME}: {p}" for p in parse_mode_problems(task, res)]  # issue 50.3
    try:
        loaded, v.task_records = task_records(task, limit=res["dataset"].get("limit"), directory=data_dir)
    except PrivasisError as exc:
        v.problems.append(f"{folder / RESULTS_NAME}: task {task.task!r}: cannot read its records ({exc})")
        return
    v.problems += record_problems(folder / SAMPLES_NAME, rows, loaded, res)


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


def verify_paths(paths: Iterable[str | Path], *, data_dir: str | Path | None = None) -> list[Verified]:
    """Verify every submission under ``paths``, then who owns each entry (see :mod:`.ownership`)."""
    outcomes = [verify_submission(folder, data_dir=data_dir) for folder in find_submissions(paths)]
    ownership_problems(outcomes)
    return outcomes


def verify_report(outcomes: Iterable[Verified], seed: int | None) -> dict[str, Any]:
    """Every entry's outcome as JSON: path, name, task, ok, problems and its board facts (see :meth:`Verified.facts`)."""
    entries = []
    for v in outcomes:
        entries.append({"path": v.path.as_posix(), "name": v.submission.get("name"),
                        "task": (v.submission.get("task") or {}).get("name"), "track": v.submission.get("track"),
                        "ok": v.ok, "problems": v.problems, **(v.facts() if v.results else {})})
    return {"format": "privasis-bench/verify-report/1", "rejudge_seed": seed, "entries": entries}


def apply_report(outcomes: Iterable[Verified], report: dict[str, Any], base: str | Path = ".") -> None:
    """Set each outcome's ``agreement`` from a ``verify --report`` file (matched by path relative to ``base``).

    ``leaderboard build`` verifies again without re-judging; a report of the re-judging run carries the agreement
    into the board data. An entry the report rejected gets that problem, so it stays off the board.
    """
    by_path = {str(e.get("path")): e for e in report.get("entries") or [] if isinstance(e, dict)}
    for v in outcomes:
        for key in (v.path.as_posix(), _relative_to(v.path, Path(base))):
            entry = by_path.get(key)
            if entry is None:
                continue
            v.agreement = entry.get("agreement") if isinstance(entry.get("agreement"), dict) else None
            if entry.get("ok") is False and v.ok:
                v.problems.append(f"{v.path}: rejected by the verify report ({len(entry.get('problems') or [])} problem(s))")
            break


def _relative_to(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
