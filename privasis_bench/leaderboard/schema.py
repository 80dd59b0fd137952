"""The shipped, versioned JSON Schemas of submitted files, and validation against them (jsonschema)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema


@lru_cache(maxsize=None)
def load_schema(version: str) -> dict[str, Any]:
    """The schema ``schemas/<version>.schema.json`` (e.g. ``results-1``), or, for a family of another package,
    ``"package:path/file.schema.json"`` read from that installed package."""
    if ":" in version:
        package, name = version.split(":", 1)
        return json.loads(resources.files(package).joinpath(name).read_text("utf-8"))
    text = resources.files("privasis_bench.leaderboard").joinpath("schemas", f"{version}.schema.json").read_text("utf-8")
    return json.loads(text)


def schema_errors(data: Any, version: str, where: str) -> list[str]:
    """One line per schema violation of ``data``, naming ``where`` and the JSON path of the field."""
    validator = jsonschema.Draft202012Validator(load_schema(version))
    lines = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."  # never echo a huge value
        lines.append(f"{where}: {path}: {message} (schema {version})")
    return lines
