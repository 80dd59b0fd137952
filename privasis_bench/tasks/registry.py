"""Find, load and resolve task YAMLs (built-in, a user's file, or a user's directory).

Files whose name starts with ``_`` are include-only bases; a ``group:`` file names a set of tasks;
a task's ``tag:`` list also works as a group name. Directories named ``lm_eval`` hold lm-eval-format
YAMLs and ``prompts``/``sample`` hold assets: none of them are scanned for tasks.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from privasis_bench.errors import TaskConfigError
from privasis_bench.fsutil import read_text
from privasis_bench.tasks.config import PATH_KEYS, GroupConfig, TaskConfig
from privasis_bench.tasks.paths import builtin_tasks_dir, locate, shipped_dirs
from privasis_bench.tasks.yaml_load import load_strict_yaml

SKIPPED_DIRS = frozenset({"lm_eval", "prompts", "sample", "recipes", "__pycache__"})
_MAX_INCLUDE_DEPTH = 8


def _read_yaml(path: Path) -> dict[str, Any]:
    data = load_strict_yaml(read_text(path, "task YAML"), path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TaskConfigError(str(path), None, f"top level must be a mapping, got {type(data).__name__}")
    return data


def _resolve_paths(data: dict[str, Any], base_dir: Path, file: Path) -> None:
    """Make the file-path values this YAML sets absolute, relative to the YAML's own directory."""
    for dotted in PATH_KEYS:
        *parents, leaf = dotted.split(".")
        node: Any = data
        for key in parents:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict) or node.get(leaf) is None:
            continue
        value = node[leaf]
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str) for v in values):
            raise TaskConfigError(str(file), dotted, "must be a file path (string)")
        resolved = [str(locate(v, base_dir)) if "://" not in v else v for v in values]
        node[leaf] = resolved if isinstance(value, list) else resolved[0]


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` laid over ``base``: nested mappings merge key by key, anything else replaces."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_yaml_with_includes(path: Path, _depth: int = 0) -> dict[str, Any]:
    """Read a YAML, resolve its relative paths, and merge it over its ``include:`` base(s)."""
    if _depth > _MAX_INCLUDE_DEPTH:
        raise TaskConfigError(str(path), "include", "includes nest too deeply (a cycle?)")
    data = _read_yaml(path)
    _resolve_paths(data, path.parent, path)
    include = data.pop("include", None)
    if include is None:
        return data
    includes = include if isinstance(include, list) else [include]
    merged: dict[str, Any] = {}
    for inc in includes:
        if not isinstance(inc, str):
            raise TaskConfigError(str(path), "include", "must be a file name or a list of file names")
        inc_path = locate(inc, path.parent)
        if not inc_path.is_file():
            raise TaskConfigError(str(path), "include", f"included file not found: {inc_path} (looked beside this file "
                                  f"and among the shipped task files in {builtin_tasks_dir()})")
        merged = deep_merge(merged, load_yaml_with_includes(inc_path, _depth + 1))
    return deep_merge(merged, data)


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"]) or None
    if err["type"] == "extra_forbidden":
        return key, "unknown key (check the spelling)"
    if err["type"] == "missing":
        return key, "required key is missing"
    got = err.get("input")
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    return key, f"{err['msg'].removeprefix('Value error, ')} (got {shown})"


def parse_task_file(path: Path) -> TaskConfig | GroupConfig:
    """Load one task or group YAML into its typed config; errors name the file and the key."""
    path = path.resolve()
    data = load_yaml_with_includes(path)
    data["source_file"] = str(path)
    model = GroupConfig if "group" in data else TaskConfig
    try:
        config = model.model_validate(data)
    except ValidationError as exc:
        key, message = _first_error(exc)
        raise TaskConfigError(str(path), key, message) from None
    if isinstance(config, TaskConfig):
        for template in config.template_files():
            if not Path(template).is_file():
                raise TaskConfigError(str(path), _key_of(config, template), f"template file not found: {template}")
        for data_file in config.dataset.data_files or []:
            if "://" not in data_file and not Path(data_file).is_file():
                raise TaskConfigError(str(path), "dataset.data_files", f"data file not found: {data_file}")
        if not config.dataset.data_files and not config.dataset.path:
            raise TaskConfigError(str(path), "dataset", "set either dataset.path (hub) or dataset.data_files (local)")
    return config


def _key_of(config: TaskConfig, template: str) -> str:
    if template == config.prompt.template:
        return "prompt.template"
    for name, value in (config.judge.templates.model_dump() if config.judge is not None else {}).items():
        if value == template:
            return f"judge.templates.{name}"
    for name, value in config.scorer_args.items():
        if value == template:
            return f"scorer_args.{name}"
    return "templates"


@dataclass
class TaskIndex:
    """All tasks and groups found in some directories, by name."""

    tasks: dict[str, TaskConfig] = field(default_factory=dict)
    groups: dict[str, GroupConfig] = field(default_factory=dict)

    def add_file(self, path: Path) -> list[str]:
        """Add one YAML file; returns the names it defined."""
        config = parse_task_file(path)
        if isinstance(config, GroupConfig):
            self.groups[config.group] = config
            return [config.group]
        self.tasks[config.task] = config
        return [config.task]

    def add_dir(self, directory: Path) -> list[str]:
        """Add every task/group YAML below a directory (skipping bases and asset dirs)."""
        names: list[str] = []
        for path in sorted(directory.rglob("*.y*ml")):
            rel_parts = path.relative_to(directory).parts[:-1]
            if path.name.startswith("_") or any(p in SKIPPED_DIRS for p in rel_parts):
                continue
            if path.suffix not in (".yaml", ".yml"):
                continue
            names.extend(self.add_file(path))
        return names

    def tags(self) -> dict[str, list[str]]:
        """Tag name -> task names carrying that tag."""
        out: dict[str, list[str]] = {}
        for task in self.tasks.values():
            for tag in task.tag:
                out.setdefault(tag, []).append(task.task)
        return out

    def expand(self, name: str, _seen: frozenset[str] = frozenset()) -> list[TaskConfig]:
        """Resolve a task, group or tag name into tasks (groups may nest)."""
        if name in self.tasks:
            return [self.tasks[name]]
        if name in self.groups:
            if name in _seen:
                raise TaskConfigError(self.groups[name].source_file or name, "task", "group refers to itself")
            out: list[TaskConfig] = []
            for member in self.groups[name].task:
                out.extend(self.expand(member, _seen | {name}))
            return out
        tags = self.tags()
        if name in tags:
            return [self.tasks[t] for t in tags[name]]
        known = sorted({*self.tasks, *self.groups, *tags})
        close = difflib.get_close_matches(name, known, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else f" Known: {', '.join(known)}."
        raise TaskConfigError(name, None, f"no such task, group or tag.{hint} (`privasis-bench tasks list`)")


def build_index(include_paths: list[str | Path] | None = None) -> TaskIndex:
    """Index the built-in tasks plus any extra directories or files."""
    index = TaskIndex()
    for _, folder in shipped_dirs():  # the harness's tasks, then those the registered families ship
        index.add_dir(folder)
    shipped = {**{n: t.source_file for n, t in index.tasks.items()}, **{n: g.source_file for n, g in index.groups.items()}}
    for extra in include_paths or []:
        extra = Path(extra)
        if extra.is_dir():
            names = index.add_dir(extra)
        elif extra.is_file():
            names = index.add_file(extra)
        else:
            raise TaskConfigError(str(extra), None, "include path does not exist")
        _refuse_shadowing(index, names, shipped)
    return index


def _refuse_shadowing(index: TaskIndex, names: list[str], shipped: dict[str, str | None]) -> None:
    """A user's task or group may not take the name of a shipped one: results would carry the shipped name."""
    for name in names:
        if name not in shipped:
            continue
        config = index.tasks.get(name) or index.groups.get(name)
        mine = config.source_file if config is not None else None
        if mine != shipped[name]:
            raise TaskConfigError(str(mine or name), "task" if name in index.tasks else "group",
                                  f"{name!r} is the name of a shipped task or group ({shipped[name]}); give yours another "
                                  "name (it may `include:` the shipped file and change what differs)")


def is_explicit_path(item: str) -> bool:
    """A ``--tasks`` value is a file or directory only when it says so: a YAML name, a trailing ``/``, or a separator.

    A bare name always means a registered task, group or tag, even if a directory of that name exists here (for
    example one that ``-o .`` created), so such a directory can never shadow a task.
    """
    return item.endswith((".yaml", ".yml", "/")) or "/" in item or (Path(item).anchor != "") or item in (".", "..")


def resolve_tasks(specs: list[str] | str, include_paths: list[str | Path] | None = None) -> list[TaskConfig]:
    """Turn ``--tasks`` values (names, groups, tags, YAML files or directories; comma-separated) into tasks."""
    if isinstance(specs, str):
        specs = [specs]
    items = [s.strip() for spec in specs for s in spec.split(",") if s.strip()]
    index = build_index(include_paths)
    resolved: list[TaskConfig] = []
    if not items:
        raise TaskConfigError("--tasks", None, "names no task (give a task, group or tag name, or a YAML file)")
    for item in items:
        path = Path(item)
        if is_explicit_path(item):
            if not path.exists():
                raise TaskConfigError(item, None, "task file or directory not found")
            names = index.add_dir(path) if path.is_dir() else index.add_file(path)
            if not names:
                raise TaskConfigError(item, None, "holds no task definition (a task YAML has a `task:` key)")
            for name in names:
                resolved.extend(index.expand(name))
        else:
            resolved.extend(index.expand(item))
    if not resolved:
        raise TaskConfigError(", ".join(items), None, "names no task")
    unique: dict[str, TaskConfig] = {}
    for task in resolved:
        unique.setdefault(task.task, task)
    return list(unique.values())


def load_task(name_or_path: str, include_paths: list[str | Path] | None = None) -> TaskConfig:
    """Resolve exactly one task."""
    tasks = resolve_tasks([name_or_path], include_paths)
    if len(tasks) != 1:
        raise TaskConfigError(name_or_path, None, f"names {len(tasks)} tasks; expected exactly one")
    return tasks[0]
