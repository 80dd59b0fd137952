"""Reading task and recipe YAML strictly: a key given twice in one mapping is an error, not a silent override.

PyYAML keeps the last of two equal keys without a word, so ``temperature: 0`` followed by ``temperature: 1`` would
run with 1. These loaders refuse that and name the file, the line and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from privasis_bench.errors import TaskConfigError


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int) -> None:
        super().__init__(key, line)
        self.key, self.line = key, line


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping naming one key twice."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:  # an unhashable key: SafeLoader's own error names it
            break
        if duplicate:
            raise _DuplicateKey(key, key_node.start_mark.line + 1)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_strict_yaml(text: str, path: Path) -> Any:
    """Parse ``text`` (read from ``path``); a duplicate key or a syntax error is a TaskConfigError naming the line."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as dup:
        raise TaskConfigError(str(path), f"line {dup.line}", f"key {dup.key!r} is given twice in the same mapping "
                              "(keep one)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise TaskConfigError(str(path), where, f"invalid YAML: {problem}") from None
