"""What the generic board code and a family's board code hand each other (the family's side lives in
``leaderboard/families/``, reached only through :data:`~privasis_bench.tasks.family.FAMILIES`).

* :class:`EntryInput`: one submitted task folder after the shared checks (schemas, hashes, provenance, ownership,
  bounds, harness, transport and labels), read-only; the family's ``verifier`` gets it.
* :class:`FamilyVerdict`: what a family's verifier returns, frozen: its problem lines, the metrics it recomputed (the
  board shows and ranks these, never the submitted ones), the facts it derived for the board, and its own derived
  counts. The generic verifier records the verdict on the entry; family code never changes the entry.
* :class:`BoardParts`: a family's own parts of the board pages (charts, published figures), each with a position so
  that parts of several families interleave in a fixed order.

It also holds the small helpers the generic verifier and the families' verifiers share (:func:`leaf_differences`,
:func:`short`, :func:`bootstrap_settings`, :func:`config_hash_problem`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from privasis_bench.leaderboard.escaping import number
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.family import DEFAULT_FAMILY, FAMILIES, FamilySpec, family_name

#: Positions of :class:`BoardParts` pieces: a family's charts, then published figures.
CHARTS, PUBLISHED = 20, 30


@dataclass(frozen=True)
class EntryInput:
    """One task folder as the shared checks accepted it (nothing here may be changed by a family)."""

    folder: Path
    submission: Mapping[str, Any]
    results: Mapping[str, Any]
    rows: list[dict[str, Any]]
    task: TaskConfig  # the shipped task (or the reference task of an entry made with a task file of its own)
    custom: tuple[str, ...]  # inputs of the user's own (task file, data files, judge prompts)
    data_dir: Path | None = None


@dataclass(frozen=True)
class FamilyVerdict:
    """A family verifier's outcome (see the module docstring)."""

    problems: tuple[str, ...] = ()  # each line names its file (and field, record or number)
    metrics: Mapping[str, Any] | None = None  # recomputed; None when the entry could not be recomputed
    facts: Mapping[str, Any] = field(default_factory=dict)  # board facts (partial, records_of_task, ...)
    task_records: int | None = None  # records or documents the whole task holds (None: not read)
    counts: Any = None  # the family's own derived counts (its row reads them back)


@dataclass(frozen=True)
class BoardParts:
    """A family's own parts of the board: ``(position, text)`` pieces of ``index.html`` and ``README.md`` and
    top-level fields of ``privasis.json``."""

    html: tuple[tuple[int, str], ...] = ()
    markdown: tuple[tuple[int, str], ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)


class UnknownFamily(ValueError):
    """A results file names a scorer the board has no family for."""


def family_of(results: Mapping[str, Any]) -> FamilySpec:
    """The family of a results file; raises :class:`UnknownFamily` naming the accepted ones."""
    name = family_name(results)
    if name not in FAMILIES:
        raise UnknownFamily(f"scorer.name {name[:60]!r} has no board family; the board accepts "
                            f"{', '.join(FAMILIES.names())}")
    return FAMILIES.get(name)


def family_named(name: str | None) -> FamilySpec:
    """A family by name (the default family for None or an unknown name: rows always render)."""
    return FAMILIES.get(name) if name and name in FAMILIES else FAMILIES.get(DEFAULT_FAMILY)


def board_families() -> list[FamilySpec]:
    """Every registered family, in registration order."""
    return [FAMILIES.get(name) for name in FAMILIES.names()]


def leaf_differences(stored: Any, derived: Any, path: str, tolerance: float) -> Iterator[tuple[str, Any, Any]]:
    """(path, stored, derived) of every leaf where two JSON trees differ; numbers within ``tolerance`` agree."""
    if isinstance(stored, Mapping) and isinstance(derived, Mapping):
        for key in sorted(set(stored) | set(derived), key=str):
            yield from leaf_differences(stored.get(key), derived.get(key), f"{path}.{key}", tolerance)
    elif isinstance(stored, list) and isinstance(derived, list) and len(stored) == len(derived):
        for i, (a, b) in enumerate(zip(stored, derived)):
            yield from leaf_differences(a, b, f"{path}[{i}]", tolerance)
    elif not (stored == derived or (number(stored) is not None and number(derived) is not None
                                    and abs(stored - derived) <= tolerance)):
        yield path, stored, derived


def short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (a problem line quotes a submitted value without repeating it)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def bootstrap_settings(results: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded bootstrap settings as a scorer's keyword arguments (verify checked they are the task's)."""
    boot = results["metrics"]["bootstrap"]
    return {"bootstrap_samples": boot["samples"], "seed": boot["seed"], "confidence": boot["confidence"]}


def config_hash_problem(entry: EntryInput) -> list[str]:
    """The config-hash check of an entry made with a shipped task (none for one with inputs of its own)."""
    res, task = entry.results, entry.task
    if entry.custom or res["task"].get("config_hash") == task.config_hash():
        return []
    return [f"{entry.folder / 'results.json'}: task.config_hash {short(res['task'].get('config_hash'))} is not the "
            f"hash of the shipped task {task.task!r} ({task.config_hash()})"]
