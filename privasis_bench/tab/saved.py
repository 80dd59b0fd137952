"""Saved outputs of a TAB run as predictions: this harness's own ``sanitized.jsonl`` or ``samples.jsonl``.

``evaluate -t tab_... -p FILE`` takes TAB's masked-output file (a JSON object, :mod:`privasis_bench.tab.spans`) or
one of these JSON Lines files, one row per document:

* ``sanitized.jsonl`` (what ``run`` journals): ``id``, ``output`` (the rewrite, null when the call failed),
  ``error``, and ``spans`` when a masking system reported them;
* ``samples.jsonl`` (what ``run``/``evaluate`` write): ``id``, ``output``, ``error``, and ``masked_spans`` with
  ``span_source``; spans a system reported (``system``) are kept, aligned ones are aligned again from the output.

Every line is read strictly (one clear line naming the file and line for a bad one); the last line of an id wins,
as in the journal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from privasis_bench.data.system_output import SystemOutput
from privasis_bench.errors import DataError
from privasis_bench.fsutil import loads_json, read_text


def is_masked_output(text: str) -> bool:
    """True when ``text`` is one JSON object mapping ids to lists (TAB's masked-output format), not JSON Lines."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return False
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return "\n{" not in stripped  # several objects on several lines: JSON Lines; let the strict reader speak
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


def read_saved_outputs(path: str | Path) -> dict[str, SystemOutput]:
    """The outputs of a ``sanitized.jsonl`` or ``samples.jsonl`` file, by document id."""
    text = read_text(path, "saved outputs file")
    out: dict[str, SystemOutput] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        row = loads_json(line, where)
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not row["id"]:
            raise DataError(f"{where}: expected a JSON object with a string 'id' (a line of sanitized.jsonl or "
                            "samples.jsonl), or pass TAB's masked-output file {doc_id: [[start, end], ...]}")
        out[row["id"]] = _output(row, where)
    if not out:
        raise DataError(f"{path}: holds no outputs (expected sanitized.jsonl or samples.jsonl lines, or TAB's "
                        "masked-output JSON object)")
    return out


def _output(row: dict[str, Any], where: str) -> SystemOutput:
    if "output" not in row:
        fields = ", ".join(repr(k if len(k) <= 30 else k[:27] + "...") for k in list(row)[:8])
        raise DataError(f"{where}: no 'output' field (the rewrite, null when its call failed); this row has {fields}"
                        f"{' ...' if len(row) > 8 else ''}: not a line of sanitized.jsonl or samples.jsonl")
    text, error = row.get("output"), row.get("error")
    if text is not None and not isinstance(text, str):
        raise DataError(f"{where}: 'output' must be a string or null")
    if error is not None and not isinstance(error, str):
        raise DataError(f"{where}: 'error' must be a string or null")
    if text is None:
        return SystemOutput(text=None, error=error or "no output in the saved file")
    spans = row.get("spans")
    if spans is None and row.get("span_source") == "system":
        spans = row.get("reported_spans", row.get("masked_spans"))  # what the system claimed; scored as shown
    if spans is not None:
        if not isinstance(spans, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in p)
                for p in spans):
            raise DataError(f"{where}: spans must be a list of [start, end] integer pairs")
        return SystemOutput(text=text, spans=[(p[0], p[1]) for p in spans])
    return SystemOutput(text=text)
