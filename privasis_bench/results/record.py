"""One run record: the typed envelope every family's ``results.json`` shares, checked against its schema as written.

:class:`RunEnvelope` holds what a run says the same way in every family (the harness, the task, the data, the
model, the instruction, the run checks, the answer policies, what was spent, when it ran); a family's scorer adds
its own sections (``judge`` and verdict counts for the judged protocol, ``scorer`` for span scorers, ...).
:func:`write_run_record` validates the whole file against the schema the family declares
(``FamilySpec.schema_versions["results"]``, in the family's schema folder) before it replaces anything on disk.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from privasis_bench import __version__
from privasis_bench.results.files import RESULTS_FORMAT, ResultsError, git_revision, write_results
from privasis_bench.results.schema import BUILTIN, schema_errors
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.family import FAMILIES
from privasis_bench.tasks.paths import file_ref, portable_name


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def portable_dataset(task: TaskConfig) -> dict[str, Any]:
    """The dataset section of a results file, naming files portably (no local paths)."""
    cfg = task.dataset
    section = cfg.model_dump(include={"path", "name", "split", "revision"})
    files = cfg.data_files or []
    section["data_files"] = [file_ref(p) for p in files] or None
    section["source"] = ", ".join(portable_name(p) or "" for p in files) if files else cfg.describe()
    return section


@dataclass
class RunEnvelope:
    """The shared part of one task's results (see the module docstring)."""

    task: TaskConfig
    model: dict[str, Any]
    instruction: str
    testee_prompt: dict[str, Any]
    dataset: dict[str, Any] = field(default_factory=dict)  # added to the task's portable dataset section
    checks: dict[str, Any] = field(default_factory=dict)
    answer_policy: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    usage_cumulative: dict[str, Any] | None = None
    started: str = field(default_factory=now)
    #: Which model played each role of the run (the model under test as ``model``, the judge, a family's roles): the
    #: label and the answer-determining identity (``pipeline.run.role_models``), never a key, a host or another secret.
    roles: dict[str, dict[str, str]] = field(default_factory=dict)

    def assemble(self, family: Mapping[str, Any], *, complete: bool, passed: bool) -> dict[str, Any]:
        """The whole results mapping: the envelope around the family's own sections."""
        head = {
            "harness": {"name": "privasis-bench", "version": __version__, "git_revision": git_revision()},
            "task": {"name": self.task.task, "version": self.task.version, "config_hash": self.task.config_hash(),
                     "source_file": file_ref(self.task.source_file)},
            "dataset": {**portable_dataset(self.task), **self.dataset},
            "model": self.model,
            "instruction": self.instruction,
            "testee_prompt": self.testee_prompt,
            "roles": self.roles,
        }
        out = {**head, **family, "checks": {**self.checks, "passed": passed}, "answer_policy": self.answer_policy,
               "usage": self.usage, "usage_cumulative": self.usage_cumulative,
               "timestamps": {"started": self.started, "finished": now()}}
        out["complete"] = complete
        return out


def record_problems(results: Mapping[str, Any], family: str, where: str) -> list[str]:
    """The schema violations of ``results`` under the results schema family ``family`` declares."""
    spec = FAMILIES.get(family)
    version = spec.schema_versions.get("results")
    if not version:
        return []
    schema_dir = str(spec.extra.get("schema_dir", BUILTIN))
    return schema_errors({"format": RESULTS_FORMAT, **results}, version, where, schema_dir=schema_dir)


def write_run_record(path: str | os.PathLike[str], results: dict[str, Any], family: str) -> None:
    """Write ``results`` atomically once it follows the family's results schema (one line per violation otherwise)."""
    problems = record_problems(results, family, str(path))
    if problems:
        raise ResultsError("results not written, they break their schema: " + "; ".join(problems[:5]))
    write_results(path, results)
