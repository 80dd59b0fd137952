"""Where benchmark-schema rows come from: a task (name, group or YAML) or a JSONL/JSON/parquet file.

A file carries rows only, so the prompt settings (template, instruction variant, answer cue) come from a
*prompt task* (default ``privasis_vanilla``, whose template every built-in task shares): the exported user
turn is then the one ``sanitize`` sends for that task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from privasis_bench.data.loading import LoadedRecords, load_records, with_data_files
from privasis_bench.errors import DataError
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.registry import load_task, resolve_tasks

ROW_FILE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".parquet", ".pq")
DEFAULT_PROMPT_TASK = "privasis_vanilla"


@dataclass
class RowSource:
    """One task's records, loaded, with the task that defines their prompt."""

    task: TaskConfig
    loaded: LoadedRecords


def is_row_file(spec: str) -> bool:
    """True when ``spec`` names a data file (by extension) rather than a task."""
    return spec.lower().endswith(ROW_FILE_SUFFIXES)


def resolve_sources(
    specs: list[str],
    *,
    prompt_task: str = DEFAULT_PROMPT_TASK,
    include_paths: list[str] | None = None,
    skip_invalid: bool = False,
    limit: int | None = None,
) -> list[RowSource]:
    """Load every task or file in ``specs`` (files are read with ``prompt_task``'s prompt settings)."""
    sources: list[RowSource] = []
    for spec in specs:
        if is_row_file(spec):
            if not Path(spec).is_file():
                raise DataError(f"{spec}: file not found")
            base = load_task(prompt_task, include_paths)
            task = with_data_files(base, [spec])
            task = task.model_copy(update={"task": f"{Path(spec).name} (prompt of {base.task})"})
            tasks = [task]
        else:
            tasks = resolve_tasks([spec], include_paths)
        for task in tasks:
            sources.append(RowSource(task, load_records(task, skip_invalid=skip_invalid, limit=limit)))
    return sources
