"""Which task a submission is checked against: a shipped task, found by its plain name and nothing else.

A submission only *names* its task. The verifier looks the name up among the tasks shipped with the package
(never a path, a group, a tag or a file in the working directory), so nothing a pull request adds can choose the
data, the judge, the prompts or an endpoint the verifier uses. A run made with a task file, data files or judge
prompts of the user's own is still publishable on the self-reported track: :func:`custom_inputs` names what was
not shipped, and the verifier then checks the files for consistency only (their hashes are recorded).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from privasis_bench.errors import PrivasisError
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import is_shipped_ref, portable_name, shipped_dirs
from privasis_bench.tasks.registry import TaskIndex


class UnknownTask(PrivasisError):
    """A submission names a task that is not shipped with this harness."""


def _shipped() -> dict[str, TaskConfig]:
    return _shipped_in(tuple(folder for _, folder in shipped_dirs()))


@lru_cache(maxsize=4)
def _shipped_in(folders: tuple[Path, ...]) -> dict[str, TaskConfig]:
    """The harness's tasks and those the registered families ship (:func:`~privasis_bench.tasks.paths.shipped_dirs`)."""
    index = TaskIndex()
    for folder in folders:
        index.add_dir(folder)
    return dict(index.tasks)


def shipped_task_names() -> list[str]:
    """The names of every task shipped with the package, sorted."""
    return sorted(_shipped())


def shipped_task(name: Any) -> TaskConfig:
    """The shipped task called exactly ``name`` (raises :class:`UnknownTask` for anything else, paths included)."""
    task = _shipped().get(name) if isinstance(name, str) else None
    if task is None:
        raise UnknownTask(f"task {str(name)[:80]!r} is not a task shipped with privasis-bench (known: "
                          f"{', '.join(shipped_task_names())}); a submission names a shipped task, never a file")
    return task


def custom_inputs(results: Mapping[str, Any]) -> list[str]:
    """What a run used that is not shipped with the package: ``task file``, ``data files``, ``judge prompts``.

    Read from the file references a run's results carry: a shipped file is ``privasis_bench:tasks/...``, a user's
    file ``{name, sha256}`` (or ``name sha256:...`` in older files).
    """
    task, data, judge = (results.get(k) or {} for k in ("task", "dataset", "judge"))
    found = set()
    name, source = task.get("name"), task.get("source_file")
    shipped = _shipped().get(name) if isinstance(name, str) else None
    if shipped is None or (source is not None and source != portable_name(shipped.source_file)):
        found.add("task file")
    files = data.get("data_files")
    if isinstance(files, (list, str, dict)) and not all(map(is_shipped_ref, files if isinstance(files, list) else [files])):
        found.add("data files")
    sources = judge.get("prompt_sources")
    if isinstance(sources, dict) and not all(map(is_shipped_ref, sources.values())):
        found.add("judge prompts")
    return sorted(found)
