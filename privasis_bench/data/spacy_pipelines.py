"""Naming a spaCy pipeline: an installed package name or a directory holding one, checked before anything loads it.

Presidio (``-m presidio,spacy_model=...``) and the TAB scorer (``scorer_args: spacy_model``) take a pipeline name
from the user. A value that is neither a Python package name nor a pipeline directory (``../../../etc``) is one
clear line naming where it came from, instead of an import machinery error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from privasis_bench.errors import PrivasisError

#: A Python package name (dotted), as spaCy pipelines are installed: ``en_core_web_sm``.
PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def is_pipeline_dir(name: str) -> bool:
    """Is ``name`` a directory holding a spaCy pipeline (its ``config.cfg``)?"""
    path = Path(name)
    return path.is_dir() and (path / "config.cfg").is_file()


def check_spacy_pipeline(name: str, where: str) -> str:
    """``name`` when it is a package name or a pipeline directory; else a one-line error naming ``where``.

    Whether a package name is installed is left to the caller (each has its own install hint).
    """
    if PACKAGE_NAME.fullmatch(name) or is_pipeline_dir(name):
        return name
    raise PrivasisError(f"{where}: {name[:120]!r} is neither a spaCy pipeline package name (letters, digits and _, "
                        "such as en_core_web_sm) nor a directory holding a spaCy pipeline (with its config.cfg)")


def pipeline_language(name: str) -> str:
    """The language code of a pipeline: the ``lang`` of a directory's ``meta.json``, else a package name's prefix."""
    if is_pipeline_dir(name):
        try:
            lang = json.loads((Path(name) / "meta.json").read_text(encoding="utf-8")).get("lang")
        except (OSError, ValueError, AttributeError):
            lang = None
        if isinstance(lang, str) and lang:
            return lang
        return Path(name).name.split("_", 1)[0]
    return name.split("_", 1)[0]
