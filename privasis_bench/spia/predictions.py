"""Saved anonymized texts for ``evaluate``: SPIA's own JSONL or this harness's ``{"id", "output"}`` rows.

SPIA's anonymization scripts write each document back with an ``anonymized_text`` field beside its ``metadata``
(``data_id``); a row may instead be ``{"id": ..., "output": ...}``. A row without a text field, an unknown document
or a document twice is one error naming the file, line and field.
"""

from __future__ import annotations

import json
from pathlib import Path

from privasis_bench.data.system_output import SystemOutput
from privasis_bench.errors import DataError


def read_anonymized(path: str | Path, known: set[str]) -> dict[str, SystemOutput]:
    """Document id -> its saved anonymized text (see the module docstring)."""
    path = Path(path)
    out: dict[str, SystemOutput] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read the anonymized texts ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise DataError(f"{where}: not a JSON object")
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        doc_id = meta.get("data_id", row.get("id"))
        field = "anonymized_text" if "anonymized_text" in row else "output" if "output" in row else None
        if not isinstance(doc_id, str):
            raise DataError(f"{where}: no metadata.data_id (SPIA's rows) or id")
        if field is None:
            raise DataError(f"{where}: no anonymized_text (SPIA's rows) or output field")
        if doc_id not in known:
            raise DataError(f"{where}: {field}: document {doc_id!r} is not in the task's data")
        if doc_id in out:
            raise DataError(f"{where}: document {doc_id!r} appears twice")
        text = row[field]
        out[doc_id] = SystemOutput(text=text) if isinstance(text, str) else SystemOutput(text=None, error=f"{field} is not text")
    return out
