"""What a submission states about its run (submission.json), portable file references, and the pinned judge.

Results files written by a run name the task, data and template files by absolute path; a submission
replaces each by ``privasis_bench:tasks/<path>`` for a shipped file, or by ``<file name> sha256:<hash>`` for
a user's file, so nothing published points into someone's machine.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import json
from pathlib import Path
from typing import Any

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.registry import builtin_tasks_dir

SUBMISSION_NAME = "submission.json"
SUBMISSION_FORMAT = "privasis-bench/submission/1"
SCHEMA_VERSIONS = {"results": "results-1", "samples": "samples-row-1", "submission": "submission-1"}
TRACKS: tuple[str, ...] = ("verified", "self-reported")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def portable_path(value: str) -> str:
    """A shipped file as ``privasis_bench:tasks/<rel>``, another existing file as ``<name> sha256:<hash>``."""
    if not value or not Path(value).is_absolute():
        return value
    path = Path(value)
    try:
        return "privasis_bench:tasks/" + path.resolve().relative_to(builtin_tasks_dir().resolve()).as_posix()
    except ValueError:
        pass
    if path.is_file():
        return f"{path.name} sha256:{sha256_file(path)}"
    return path.name


def portable_results(results: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``results`` whose file references are portable (see :func:`portable_path`)."""
    out = copy.deepcopy(results)
    task, data, judge = out.get("task") or {}, out.get("dataset") or {}, out.get("judge") or {}
    if isinstance(task.get("source_file"), str):
        task["source_file"] = portable_path(task["source_file"])
    if isinstance(data.get("source"), str):
        data["source"] = " + ".join(portable_path(p) for p in data["source"].split(" + "))
    if isinstance(data.get("data_files"), list):
        data["data_files"] = [portable_path(p) for p in data["data_files"]]
    elif isinstance(data.get("data_files"), str):
        data["data_files"] = portable_path(data["data_files"])
    if isinstance(judge.get("prompt_sources"), dict):
        judge["prompt_sources"] = {k: portable_path(v) for k, v in judge["prompt_sources"].items()}
    return out


def _portable_tree(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _portable_tree(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_portable_tree(v) for v in data]
    return portable_path(data) if isinstance(data, str) else data


def portable_task_hash(task: TaskConfig) -> str:
    """sha256 of the resolved task config and its template contents, independent of where it is installed.

    ``TaskConfig.config_hash`` hashes absolute file paths, so the same shipped task hashes differently in a
    checkout and in an installed wheel; this hash names shipped files as ``privasis_bench:tasks/...``.
    """
    payload = _portable_tree(task.model_dump(exclude={"source_file"}))
    payload["_template_contents"] = {portable_path(p): sha256_file(Path(p)) for p in task.template_files()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def pinned_judge(task: TaskConfig) -> tuple[str, dict[str, str]]:
    """The judge key and template hashes the board pins for ``task``: the shipped task's own."""
    spec = ModelSpec.parse(task.judge.model, task.judge.model_args)
    return spec.key(), JudgePrompts.load(task.judge.templates).hashes


def judge_pin_problems(task: TaskConfig, judge: dict[str, Any]) -> list[str]:
    """Why a results file's judge section is not the board's pinned judge (empty when it is)."""
    key, hashes = pinned_judge(task)
    problems = []
    if judge.get("key") != key:
        problems.append(f"judge is {judge.get('key')!r}, the verified track pins {key!r}")
    for name, digest in sorted(hashes.items()):
        if (judge.get("prompt_hashes") or {}).get(name) != digest:
            problems.append(f"judge prompt {name!r} hash differs from the shipped template's")
    return problems


def submission_record(results: dict[str, Any], *, name: str, track: str, reference: bool, label: str | None,
                      files: dict[str, str], records: int, task_hash: str) -> dict[str, Any]:
    """The submission.json content for one task run (``results`` already portable)."""
    judge, data = results.get("judge") or {}, results.get("dataset") or {}
    stamps = results.get("timestamps") or {}
    return {
        "format": SUBMISSION_FORMAT,
        "schema_versions": dict(SCHEMA_VERSIONS),
        "name": name,
        "track": track,
        "reference": reference,
        "label": label,
        "harness": {k: (results.get("harness") or {}).get(k) for k in ("name", "version", "git_revision")},
        "task": {**{k: (results.get("task") or {}).get(k) for k in ("name", "version", "config_hash", "source_file")},
                 "portable_hash": task_hash},
        "dataset": {"revision": data.get("revision"), "ids_hash": data.get("ids_hash"), "records": records,
                    "limit": data.get("limit"), "source": data.get("source")},
        "model": {"label": results["model"].get("label"), "spec": results["model"].get("spec"),
                  "rankable": results["model"].get("rankable")},
        "judge": {"mode": judge.get("mode"), "label": judge.get("label"), "spec": judge.get("spec"),
                  "key": judge.get("key"), "prompt_hashes": judge.get("prompt_hashes")},
        "parse_mode": results.get("parse_mode"),
        "instruction": results.get("instruction"),
        "dates": {"run_started": stamps.get("started"), "run_finished": stamps.get("finished"),
                  "submitted": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")},
        "files": files,
    }
