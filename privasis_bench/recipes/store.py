"""Resumable recipe outputs: finished rows are appended as they land and skipped on a re-run.

``<dir>/<name>.jsonl`` holds finished rows (one per id), ``<dir>/failures.jsonl`` the rows that failed (id,
step, message, retry round, usage and the row's own statistics), ``<dir>/<name>.meta.json`` the settings
fingerprint (a re-run with other settings refuses to mix its rows in), the counts of the last run (``counts``),
those of every completed run (``runs``), the statistics of every attempt on record whichever run made it
(``cumulative``: computed from the rows and failures on disk, so a run that was interrupted counts too) and how
many runs completed.

Retry rounds make re-runs deterministic: a run is round ``r`` = the number of runs that completed before it. It
tries again, with new samples (round ``r`` seeds), the rows that failed in earlier rounds; rows that failed in
round ``r`` itself (a run of this round that was interrupted) are not tried again, so an interrupted run that is
resumed writes exactly what the uninterrupted run would have written.
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
        self.rounds_completed = 0
        self.runs: list[dict[str, Any]] = []
        self.cumulative: dict[str, Any] | None = None
        if overwrite:
            for p in (self.path, self.failures_path, self.meta_path):
                p.unlink(missing_ok=True)
        if self.meta_path.exists():
            try:
                meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
                previous = meta.get("settings")
                self.rounds_completed = int(meta.get("rounds_completed") or 0)
                self.runs = [r for r in meta.get("runs") or ([meta["counts"]] if meta.get("counts") else [])
                             if isinstance(r, dict)]
                self.cumulative = meta.get("cumulative") if isinstance(meta.get("cumulative"), dict) else None
            except (OSError, ValueError, TypeError, AttributeError):
                previous = None
            if previous != settings:
                diffs = sorted(k for k in set(settings) | set(previous or {}) if (previous or {}).get(k) != settings.get(k))
                raise OutputMismatchError(
                    f"{self.path} was produced with other settings ({', '.join(diffs) or 'unreadable sidecar'}); "
                    "use another --output directory or pass --overwrite"
                )
        self.write_meta(None)  # from now on a re-run with other settings is refused (the rows file appears with its first row)

    def rows(self) -> list[dict[str, Any]]:
        """Finished rows (the last line per id wins)."""
        return list({r["id"]: r for r in read_jsonl(self.path) if "id" in r}.values())

    def done_ids(self) -> set[str]:
        return {r["id"] for r in self.rows()}

    def add(self, rows: Iterable[dict[str, Any]]) -> None:
        """Append finished rows (flushed and fsynced)."""
        _append(self.path, rows)

    def add_failures(self, rows: Iterable[dict[str, Any]]) -> None:
        """Append failed rows: id, the step and message, this run's round, the row's usage and its statistics."""
        _append(self.failures_path, ({"id": r["id"], **r["error"], "round": self.rounds_completed, "usage": r.get("usage"),
                                      "stats": r.get("stats") or {}} for r in rows))

    def attempts(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(finished rows, every failure line): every attempt on record, in every run (interrupted ones too)."""
        return self.rows(), read_jsonl(self.failures_path)

    def failures(self) -> list[dict[str, Any]]:
        """Failures whose id has no finished row (the last failure per id)."""
        done = self.done_ids()
        return list({f["id"]: f for f in read_jsonl(self.failures_path) if f.get("id") not in done}.values())

    def retry_plan(self) -> tuple[dict[str, int], set[str]]:
        """(ids to try again with this run's round, ids that already failed in this round and are not retried)."""
        done, now = self.done_ids(), self.rounds_completed
        rounds: dict[str, set[int]] = {}
        for f in read_jsonl(self.failures_path):
            if f.get("id") not in done:
                rounds.setdefault(str(f.get("id")), set()).add(int(f.get("round") or 0))
        retry = {i: now for i, seen in rounds.items() if now not in seen}
        return retry, {i for i, seen in rounds.items() if now in seen}

    def complete_round(self, counts: dict[str, Any], cumulative: dict[str, Any] | None = None) -> None:
        """Record a finished run (its counts, and the statistics of every run so far) and start the next round."""
        self.rounds_completed += 1
        self.runs.append(counts)
        if cumulative is not None:
            self.cumulative = cumulative
        self.write_meta(counts)

    def write_meta(self, counts: dict[str, Any] | None) -> None:
        """Write the sidecar: settings, counts (None while a run is under way), every completed run's counts, the
        statistics over all runs and completed rounds."""
        body = {"settings": self.settings, "counts": counts, "rounds_completed": self.rounds_completed,
                "runs": self.runs, "cumulative": self.cumulative}
        tmp = self.meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.meta_path)
