"""The board's downloads: every entry and every family as the same flat tables, and each verified entry's Hub
eval-results YAML and Every Eval Ever record.

The tables are :func:`privasis_bench.results.export.metric_rows` (one row per entry x task x metric with interval
bounds, what ``privasis-bench export --format csv`` writes), read from the submitted ``results.json`` of the task
folders the verifier accepted, with the entry's name, track and the board's recomputed headline beside them. The
same rows are written as CSV and as JSON (a list of objects), per entry under ``data/<entry>/`` and per family as
``data/family-<family>.csv`` / ``.json``.

The Hub YAML and the EEE record come from the project's exporters (:mod:`privasis_bench.results.export`,
:mod:`privasis_bench.results.eee`). A Hub entry must name a benchmark dataset on the Hub: an entry whose task reads
the bundled sample files has none, so it gets no YAML and the board says why. Its EEE record states the evaluator's
relationship as ``other`` (the board does not know who the submitter is to the model) and the submitter's name as
the organisation. The EEE record's retrieval time is the build date, so a rebuild writes the same bytes.

Every value comes from a submission and is hostile: the CSV writer defuses cells a spreadsheet would run as a
formula, and the page escapes every link it draws from these names.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.results.export import ExportError, TaskRun, hub_entries, hub_yaml, metric_rows
from privasis_bench.results.files import atomic_write_text, dumps_json

DATA_DIR = "data"
#: Leading characters a spreadsheet reads as a formula (a cell starting with one gets a leading apostrophe).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
__all__ = ["DATA_DIR", "EntryFiles", "csv_text", "entry_files", "family_files"]


@dataclass(frozen=True)
class EntryFiles:
    """What one entry offers for download (paths relative to the board directory) and why a format is missing."""

    csv: str
    json: str
    hub: str | None = None
    eee: str | None = None
    missing: dict[str, str] = field(default_factory=dict)  # format -> the reason it is not offered

    def as_dict(self) -> dict[str, Any]:
        """The row field ``downloads``."""
        return {"csv": self.csv, "json": self.json, "hub": self.hub, "eee": self.eee, "missing": dict(self.missing)}


def _safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_text(rows: Iterable[dict[str, Any]]) -> str:
    """Rows as CSV text (the union of their columns, in first-seen order; formula-like cells defused)."""
    rows = list(rows)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _safe_cell(v) for k, v in row.items()} for row in rows)
    return out.getvalue()


def _write_tables(out: Path, stem: str, rows: list[dict[str, Any]]) -> tuple[str, str]:
    for suffix, text in (("csv", csv_text(rows)), ("json", dumps_json(rows))):
        (out / f"{stem}.{suffix}").parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / f"{stem}.{suffix}", text)
    return f"{stem}.csv", f"{stem}.json"


def table_rows(folder: Path, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The flat metric rows of one accepted task folder, each with the board entry's name and track."""
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return [{"entry": entry.get("name"), "track": entry.get("track"), **row}
            for row in metric_rows([TaskRun(folder, results)])]


def _retrieved(date: str) -> int:
    try:
        return int(_dt.datetime.fromisoformat(date).replace(tzinfo=_dt.timezone.utc).timestamp())
    except ValueError:
        return 0


def _hub(run: TaskRun, out: Path, stem: str) -> tuple[str | None, str | None]:
    if not ((run.results.get("dataset") or {}).get("path") or (run.results.get("dataset") or {}).get("name")):
        return None, ("its task reads the bundled sample files, which are no Hub dataset (export it with "
                      "privasis-bench export -f hub --dataset-id TASK=OWNER/NAME)")
    try:
        files = hub_entries([run])
        (variant, entries), = files.items()
        text = hub_yaml(entries)
    except (ExportError, ValueError, TypeError) as exc:
        return None, f"the exporter refused it: {str(exc)[:160]}"
    rel = f"{stem}/{variant}.yaml"
    atomic_write_text(out / rel, text)
    return rel, None


def _eee(run: TaskRun, out: Path, stem: str, owner: str, retrieved: int) -> tuple[str | None, str | None]:
    from privasis_bench.results.eee import ForeignPrompt, eee_record

    try:
        record = eee_record(run, relationship="other", organization=owner, retrieved=retrieved, shipped_prompts_only=True)
    except ForeignPrompt:
        return None, "its grading prompts are its own files (the board reads only the harness's shipped prompts)"
    except (ExportError, ValueError, TypeError, KeyError) as exc:
        return None, f"the exporter refused it: {str(exc)[:160]}"
    body = "".join(json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n" for i in record.instances)
    record.aggregate["detailed_evaluation_results"]["file_path"] = "eee_samples.jsonl"  # beside it in the download
    atomic_write_text(out / stem / "eee_samples.jsonl", body)
    atomic_write_text(out / stem / "eee.json", json.dumps(record.aggregate, ensure_ascii=False, indent=2) + "\n")
    return f"{stem}/eee.json", None


def entry_files(folder: Path, entry: dict[str, Any], out: Path, key: str, date: str) -> EntryFiles:
    """Write one accepted task folder's downloads under ``out/data/<key>/``; what it offers."""
    stem = f"{DATA_DIR}/{key}"
    csv_rel, json_rel = _write_tables(out, f"{stem}/metrics", table_rows(folder, entry))
    missing: dict[str, str] = {}
    hub = eee = None
    if entry.get("track") != "verified":
        missing["hub"] = missing["eee"] = "self-reported entries are not exported (only what the verifier re-judged)"
    else:
        run = TaskRun(folder, json.loads((folder / "results.json").read_text(encoding="utf-8")))
        hub, why = _hub(run, out, stem)
        if why:
            missing["hub"] = why
        owner = str(entry.get("name") or "unknown").split("/", 1)[0] or "unknown"
        eee, why = _eee(run, out, stem, owner, _retrieved(date))
        if why:
            missing["eee"] = why
    return EntryFiles(csv_rel, json_rel, hub, eee, missing)


def family_files(out: Path, tables: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, str]]:
    """Write one CSV and one JSON per family (every entry's rows of :func:`table_rows`); ``{family: {csv, json}}``."""
    written = {}
    for family, rows in sorted(tables.items()):
        csv_rel, json_rel = _write_tables(out, f"{DATA_DIR}/family-{family}", rows)
        written[family] = {"csv": csv_rel, "json": json_rel}
    return written
