"""Resumable recipe outputs: finished rows are appended as they land and skipped on a re-run.

``<dir>/<name>.jsonl`` holds finished rows (one per id), ``<dir>/failures.jsonl`` the rows that failed (id,
step, message: a re-run tries them again), ``<dir>/<name>.meta.json`` the settings fingerprint (a re-run with
other settings refuses to mix its rows in) and the counts of the last run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from privasis_bench.errors import PrivasisError


class OutputMismatchError(PrivasisError):
    """An output directory holds rows produced with other settings."""


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a JSONL file; a line cut short by a crash is skipped."""
    rows: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError:
                        continue
    except FileNotFoundError:
        pass
    return rows


def _append(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    lines = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) + "\n" for r in rows)
    if not lines:
        return
    with open(path, "a", encoding="utf-8") as fh:
        if fh.tell() > 0:  # a crash may have left a partial last line: start on a fresh one
            with open(path, "rb") as check:
                check.seek(-1, os.SEEK_END)
                if check.read(1) != b"\n":
                    fh.write("\n")
        fh.write(lines)
        fh.flush()
        os.fsync(fh.fileno())


class RowStore:
    """One recipe output file with its failures file and settings sidecar."""

    def __init__(self, out_dir: str | os.PathLike[str], name: str, settings: dict[str, Any], *, overwrite: bool = False):
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / f"{name}.jsonl"
        self.failures_path = self.dir / "failures.jsonl"
        self.meta_path = self.dir / f"{name}.meta.json"
        self.settings = settings
        if overwrite:
            for p in (self.path, self.failures_path, self.meta_path):
                p.unlink(missing_ok=True)
        if self.meta_path.exists() and self.path.exists():
            try:
                previous = json.loads(self.meta_path.read_text(encoding="utf-8")).get("settings")
            except (OSError, ValueError):
                previous = None
            if previous != settings:
                diffs = sorted(k for k in set(settings) | set(previous or {}) if (previous or {}).get(k) != settings.get(k))
                raise OutputMismatchError(
                    f"{self.path} was produced with other settings ({', '.join(diffs) or 'unreadable sidecar'}); "
                    "use another --output directory or pass --overwrite"
                )
        self.write_meta(None)
        self.path.touch()  # from now on a re-run with other settings is refused

    def rows(self) -> list[dict[str, Any]]:
        """Finished rows (the last line per id wins)."""
        return list({r["id"]: r for r in read_jsonl(self.path) if "id" in r}.values())

    def done_ids(self) -> set[str]:
        return {r["id"] for r in self.rows()}

    def add(self, rows: Iterable[dict[str, Any]]) -> None:
        """Append finished rows (flushed and fsynced)."""
        _append(self.path, rows)

    def add_failures(self, rows: Iterable[dict[str, Any]]) -> None:
        """Append failed rows: id, the step and message, and the row's usage."""
        _append(self.failures_path, ({"id": r["id"], **r["error"], "usage": r.get("usage")} for r in rows))

    def failures(self) -> list[dict[str, Any]]:
        """Failures whose id has no finished row (the last failure per id)."""
        done = self.done_ids()
        return list({f["id"]: f for f in read_jsonl(self.failures_path) if f.get("id") not in done}.values())

    def write_meta(self, counts: dict[str, Any] | None) -> None:
        body = {"settings": self.settings, "counts": counts}
        tmp = self.meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.meta_path)
