"""One lazy registry for every pluggable kind (task families, adapters, batch clients, ...).

A registry maps a name to either an object or a ``"module:attr"`` target that is imported on first use, so that
registering something costs nothing until it is asked for. Third-party packages add entries through an
entry-point group (``[project.entry-points."<group>"]``); built-in entries are registered by the package itself,
and an entry registered in code wins over an entry point of the same name.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import os
import sys
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

T = TypeVar("T")
_INSTALLED: dict[str, tuple[tuple, tuple[importlib.metadata.EntryPoint, ...]]] = {}


def installed_entry_points(group: str) -> tuple[importlib.metadata.EntryPoint, ...]:
    """The installed metadata's entry points of ``group``, read again only when the import path changed.

    Reading them means opening every installed distribution's metadata (a tenth of a second and more in a large
    environment), and a run asks many times. The answer is kept while ``sys.path`` and the modification times of its
    folders stay the same: installing or removing a distribution adds or removes a folder there, as importlib's own
    directory cache assumes.
    """
    key = (os.getcwd() if "" in sys.path else None, tuple(sys.path), tuple(_mtime(entry) for entry in sys.path))
    cached = _INSTALLED.get(group)
    if cached is None or cached[0] != key:
        cached = _INSTALLED[group] = (key, tuple(importlib.metadata.entry_points(group=group)))
    return cached[1]


def _mtime(entry: str) -> int | None:
    try:
        return os.stat(entry or ".").st_mtime_ns
    except OSError:
        return None


class UnknownName(KeyError):
    """A name the registry does not hold; the message lists the names it does (and the closest one)."""

    def __str__(self) -> str:  # KeyError quotes its argument; this is meant to be read
        return str(self.args[0])


def import_target(target: str) -> Any:
    """The object a ``"module:attr"`` (or ``"module:Class.attr"``) string points to."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{target!r} is not a 'module:attr' target")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Names -> objects of one kind, resolved lazily (see the module docstring).

    ``check`` (optional) validates a resolved object and returns it (or raises); ``kind`` names what the registry
    holds in error messages; ``entry_points`` (optional) lists the plugin entry points instead of the installed
    metadata of ``entry_point_group`` (the first of a name wins).
    """

    def __init__(self, kind: str, *, entry_point_group: str | None = None,
                 check: Callable[[Any, str], T] | None = None,
                 entry_points: Callable[[], Iterable[importlib.metadata.EntryPoint]] | None = None) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._check = check
        self._list_entry_points = entry_points
        self._targets: dict[str, str | T] = {}
        self._resolved: dict[str, T] = {}

    def register(self, name: str, target: str | T, *, replace: bool = False) -> None:
        """Register ``target`` (an object or a ``"module:attr"`` string) under ``name``."""
        if name in self._targets and not replace and self._targets[name] != target:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._targets[name] = target
        self._resolved.pop(name, None)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (tests that register a temporary entry call this when done)."""
        self._targets.pop(name, None)
        self._resolved.pop(name, None)

    def entry_points(self) -> dict[str, importlib.metadata.EntryPoint]:
        """The plugin entry points by name (the first of each name; none when the metadata is unreadable)."""
        try:
            if self._list_entry_points is not None:
                found = list(self._list_entry_points())
            elif self.entry_point_group:
                found = list(installed_entry_points(self.entry_point_group))
            else:
                return {}
        except Exception:  # noqa: BLE001 - broken third-party metadata must not break the harness
            return {}
        out: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in found:
            out.setdefault(ep.name, ep)
        return out

    def names(self) -> list[str]:
        """Every registered name (built-in first, in registration order, then entry points, sorted)."""
        plugins = sorted(n for n in self.entry_points() if n not in self._targets)
        return [*self._targets, *plugins]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._targets or name in self.entry_points())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def builtin(self, name: str) -> bool:
        """True when ``name`` was registered in code (not found through an entry point)."""
        return name in self._targets

    def target(self, name: str) -> str | T:
        """What ``name`` was registered as (the ``"module:attr"`` string when it was registered by one)."""
        if name in self._targets:
            return self._targets[name]
        ep = self.entry_points().get(name)
        if ep is None:
            raise self._unknown(name)
        return ep.value

    def get(self, name: str) -> T:
        """The object registered under ``name``, imported on first use; :class:`UnknownName` otherwise.

        A target that cannot be imported raises ImportError naming it (the original error is its cause)."""
        if name in self._resolved:
            return self._resolved[name]
        target = self.target(name)
        where = f"{self.kind} {name!r}"
        if isinstance(target, str):
            try:
                obj = import_target(target)
            except Exception as exc:  # noqa: BLE001 - a plugin's module may fail in any way; said in one line
                raise ImportError(f"{where}: cannot load {target!r}: {type(exc).__name__}: {exc}") from exc
        else:
            obj = target
        value = self._check(obj, where) if self._check else obj
        if name in self._targets:  # plugins are looked up again (their metadata may change between calls)
            self._resolved[name] = value
        return value

    def unknown(self, name: str, *, cutoff: float = 0.6) -> UnknownName:
        """The error for a name the registry does not hold (with the closest known name)."""
        return self._unknown(name, cutoff)

    def _unknown(self, name: str, cutoff: float = 0.6) -> UnknownName:
        known = self.names()
        close = difflib.get_close_matches(name, known, n=1, cutoff=cutoff)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return UnknownName(f"unknown {self.kind} {name!r}{hint}; known: {', '.join(known) or 'none'}")
