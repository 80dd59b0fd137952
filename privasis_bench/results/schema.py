"""The versioned JSON Schemas of run records and submitted files, and validation against them (jsonschema).

Built-in schemas live in ``results/schemas/``; a family outside the package keeps its own beside its code and names
that folder (``FamilySpec.extra["schema_dir"]``, a ``"package:folder"`` or a path).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

BUILTIN = "privasis_bench.results:schemas"


def _folder(where: str) -> Any:
    package, sep, folder = where.partition(":")
    if sep and not Path(where).exists():
        return resources.files(package).joinpath(folder)
    return Path(where)


@lru_cache(maxsize=None)
def load_schema(version: str, where: str = BUILTIN) -> dict[str, Any]:
    """The schema ``<version>.schema.json`` (e.g. ``results-1``) of the folder ``where`` (the built-in one by default,
    and the built-in one for a version that folder does not hold);
    a version written ``"package:path/file.schema.json"`` names the file inside an installed package itself."""
    if ":" in version:
        package, name = version.split(":", 1)
        return json.loads(resources.files(package).joinpath(name).read_text("utf-8"))
    own = _folder(where).joinpath(f"{version}.schema.json")
    if where != BUILTIN and not own.is_file():  # a family's folder holds its own versions; shared ones are built in
        own = _folder(BUILTIN).joinpath(f"{version}.schema.json")
    return json.loads(own.read_text("utf-8"))


def schema_errors(data: Any, version: str, where: str, *, schema_dir: str = BUILTIN) -> list[str]:
    """One line per schema violation of ``data``, naming ``where`` and the JSON path of the field."""
    validator = jsonschema.Draft202012Validator(load_schema(version, schema_dir))
    lines = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."  # never echo a huge value
        lines.append(f"{where}: {path}: {message} (schema {version})")
    return lines
