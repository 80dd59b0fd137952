"""What a submission states about its run (submission.json), portable file references, and the pinned judge.

Results files written by a run name the task, data and template files by absolute path; a submission
replaces each by ``privasis_bench:tasks/<path>`` for a shipped file, or by ``<file name> sha256:<hash>`` for
a user's file, so nothing published points into someone's machine.
"""

from __future__ import annotations

import copy
import datetime as _dt
from pathlib import Path
from typing import Any, Mapping

from privasis_bench.adapters.spec import TRANSPORT_ARGS, ModelSpec
from privasis_bench.leaderboard.task_source import custom_inputs
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_sha256, shipped_ref

SUBMISSION_NAME = "submission.json"
SUBMISSION_FORMAT = "privasis-bench/submission/1"
TRACKS: tuple[str, ...] = ("verified", "self-reported")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes (raises OSError when it cannot be read)."""
    digest = file_sha256(path)
    if digest is None:
        raise OSError(f"cannot read {path}")
    return digest


def portable_path(value: str) -> str:
    """A shipped file as ``privasis_bench:tasks/<rel>``, another existing file as ``<name> sha256:<hash>``.

    The naming rules are :mod:`privasis_bench.tasks.paths`'s; this is only their one-string form for old fields. A
    reference that is already portable (``{name, sha256}``, as runs record a user's file) is returned unchanged.
    """
    if not isinstance(value, str):
        return value
    if not value or not Path(value).is_absolute():
        return value
    shipped = shipped_ref(value)
    if shipped is not None:
        return shipped
    digest = file_sha256(value) if Path(value).is_file() else None
    return f"{Path(value).name} sha256:{digest}" if digest else Path(value).name


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
    for role in ("model", "judge"):  # where a model was reached is nobody's business (and names internal hosts)
        section = out.get(role)
        if isinstance(section, dict) and "spec" in section:
            section["spec"] = without_transport(section["spec"])
    return out


def without_transport(spec: Any) -> Any:
    """A spec dict without transport arguments (base_url, timeout, ...), as published files record it."""
    if not isinstance(spec, dict) or not isinstance(spec.get("args"), dict):
        return spec
    return {**spec, "args": {k: v for k, v in spec["args"].items() if str(k).lower() not in TRANSPORT_ARGS}}


def pinned_judge(task: TaskConfig) -> tuple[str, dict[str, str]]:
    """The judge key and template hashes the board pins for ``task``: the shipped task's own."""
    spec = ModelSpec.parse(task.judge.model, task.judge.model_args)
    return spec.cache_identity(), JudgePrompts.load(task.judge.templates).hashes


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


def role_pin_problems(results: Mapping[str, Any]) -> list[str]:
    """Why the models a results file records for its family's pinned roles (``FamilySpec.extra["pinned_roles"]``:
    role -> spec, e.g. SPIA's adversary and matcher) are not the ones the verified track re-asks (empty when they
    are). A run recorded before results named its roles has no ``roles``: it is refused too."""
    from privasis_bench.leaderboard.family_api import family_of

    pinned = dict(family_of(results).extra.get("pinned_roles") or {})
    recorded = results.get("roles") if isinstance(results.get("roles"), dict) else {}
    problems = []
    for role, spec in sorted(pinned.items()):
        key = ModelSpec.parse(spec).cache_identity()
        got = (recorded.get(role) or {}).get("key") if isinstance(recorded.get(role), dict) else None
        if got != key:
            problems.append(f"the {role} is {got!r}, the verified track pins {key!r}" if got else
                            f"roles.{role} is not recorded (the verified track pins {key!r}; re-run with this harness)")
    return problems


def submission_record(results: dict[str, Any], *, name: str, track: str, reference: bool, label: str | None,
                      files: dict[str, str], records: int, task_hash: str, owner: str | None = None) -> dict[str, Any]:
    """The submission.json content for one task run (``results`` already portable); the schema versions are its
    family's (see :mod:`.families`); ``owner`` defaults to the name's organisation (see :mod:`.ownership`)."""
    from privasis_bench.leaderboard.family_api import family_of

    versions = dict(family_of(results).schema_versions)
    judge, data = results.get("judge") or {}, results.get("dataset") or {}
    stamps = results.get("timestamps") or {}
    return {
        "format": SUBMISSION_FORMAT,
        "schema_versions": versions,
        "name": name,
        "owner": owner or name.split("/")[0],
        "track": track,
        "reference": reference,
        "label": label,
        "harness": {k: (results.get("harness") or {}).get(k) for k in ("name", "version", "git_revision")},
        "task": {**{k: (results.get("task") or {}).get(k) for k in ("name", "version", "config_hash", "source_file")},
                 "portable_hash": task_hash},
        "dataset": {"revision": data.get("revision"), "ids_hash": data.get("ids_hash"), "records": records,
                    "limit": data.get("limit"), "source": data.get("source")},
        "model": {"label": results["model"].get("label"), "spec": without_transport(results["model"].get("spec")),
                  "backend": results["model"].get("backend"),
                  "rankable": results["model"].get("rankable")},
        "judge": {"mode": judge.get("mode"), "label": judge.get("label"), "spec": without_transport(judge.get("spec")),
                  "key": judge.get("key"), "prompt_hashes": judge.get("prompt_hashes")},
        "parse_mode": results.get("parse_mode"),
        "scoring_preset": results.get("scoring_preset"),  # "paper": --preset paper (docs/reproducing.md)
        "instruction": results.get("instruction"),
        "testee_prompt": results.get("testee_prompt"),
        "dates": {"run_started": stamps.get("started"), "run_finished": stamps.get("finished"),
                  "submitted": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")},
        "files": files,
        "custom_inputs": custom_inputs(results),  # files of the user's own (hashes in results.json): self-reported
    }
