"""The prompt templates a finished run used, read back (for an export that must carry the real prompts).

A run records each template by where it came from (a shipped file's portable name, see :mod:`.paths`, or a path)
and by the sha256 of its text; reading it back checks the text against that sha256, so an export never shows a
prompt the run did not use.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from privasis_bench.fsutil import read_template_text
from privasis_bench.tasks.paths import shipped_path


class TemplateMismatch(ValueError):
    """A recorded template cannot be read, or its text is not the one the run used."""


def recorded_template(what: str, source: object, sha256: str) -> str:
    """The text of template ``what`` (e.g. "judge template compare") from ``source``, checked against ``sha256``."""
    if not isinstance(source, str) or not source:
        raise TemplateMismatch(f"{what}: no source recorded, so its text cannot be read back")
    try:
        path = shipped_path(source) or Path(source)
    except ValueError as exc:
        raise TemplateMismatch(str(exc)) from None
    try:
        text = read_template_text(path, what)
    except Exception:  # noqa: BLE001 - one line naming the template
        raise TemplateMismatch(f"{what}: {source} cannot be read") from None
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != sha256:
        raise TemplateMismatch(f"{what}: {source} is not the text the run used (sha256 differs)")
    return text
