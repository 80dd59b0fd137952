"""Check a submission's samples against the shipped task's records: ids, their hash, order and every attribute."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from privasis_bench.data.loading import LoadedRecords
from privasis_bench.data.records import Record


def _attributes(record: Record) -> tuple[list[tuple], list[tuple]]:
    targets = [(a.name, a.kind, a.value) for a in record.targets]
    keep = [(a.name, a.value) for a in record.keep]
    return targets, keep


def _row_attributes(row: dict[str, Any]) -> tuple[list[tuple], list[tuple]]:
    targets = [(t.get("name"), t.get("kind"), t.get("value")) for t in row.get("targets") or []]
    keep = [(k.get("name"), k.get("value")) for k in row.get("keep") or []]
    return targets, keep


def record_problems(where: Path, rows: list[dict[str, Any]], loaded: LoadedRecords, results: dict[str, Any]) -> list[str]:
    """Missing, extra, duplicated or reordered records; an ids hash or an attribute that differs from the task."""
    problems: list[str] = []
    if loaded.ids_hash != results["dataset"]["ids_hash"]:
        problems.append(f"{where}: dataset.ids_hash in results.json differs from the task's records ({loaded.ids_hash})")
    ids = [str(r.get("record_id")) for r in rows]
    for rid, n in sorted(Counter(ids).items()):
        if n > 1:
            problems.append(f"{where}: record {rid} appears {n} times")
    expected = {r.id: r for r in loaded.records}
    for rid in sorted(set(expected) - set(ids)):
        problems.append(f"{where}: record {rid} of the task is missing")
    for rid in sorted(set(ids) - set(expected)):
        problems.append(f"{where}: record {rid} is not in the task")
    if len(rows) != len(loaded.records):
        problems.append(f"{where}: {len(rows)} records, the task has {len(loaded.records)}")
    for row in rows:
        record = expected.get(str(row.get("record_id")))
        if record is None:
            continue
        for key, want in (("category", record.breakdown_category), ("record_type", record.record_type)):
            if row.get(key) != want:
                problems.append(f"{where}: record {record.id}: {key} {str(row.get(key))[:60]!r} is not the task's "
                                f"{want[:60]!r}")
        if (row.get("status") == "excluded") != record.excluded:
            problems.append(f"{where}: record {record.id}: status {row.get('status')!r} but the task "
                            f"{'excludes' if record.excluded else 'scores'} it")
            continue
        if record.excluded:
            continue
        want_t, want_k = _attributes(record)
        got_t, got_k = _row_attributes(row)
        if got_t != want_t:
            problems.append(f"{where}: record {record.id}: targets (name, kind, value) differ from the task's")
        if got_k != want_k:
            problems.append(f"{where}: record {record.id}: keep attributes (name, value) differ from the task's")
    return problems
