"""Where finished records go, in record order: the samples file, compact metric tallies and the run's counts.

Nothing here keeps a record's verdict after it is written: the metrics are computed later from the
:class:`~privasis_bench.protocol.tallies.MetricTallies`, and the results file names failed, unjudged and
unparseable records by id only. The samples file is written to a temporary file and moved into place by
:meth:`ResultSink.commit`, so a run that stops half-way leaves the previous samples file as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from privasis_bench.adapters.base import is_cut_failure
from privasis_bench.data.records import Record
from privasis_bench.protocol.labels import OffLabelAnswer, off_label_answers
from privasis_bench.protocol.tallies import MetricTallies
from privasis_bench.protocol.verdicts import SCORED_STATUSES, RecordVerdict

#: ``excluded_reason`` of a row left out because the predictions file had no line for it.
MISSING_PREDICTION = "no_prediction"
#: How many off-label answers the results file quotes (all of them are counted).
OFF_LABEL_QUOTED = 50


class ResultSink:
    """Consumes ``(record, output, verdict)`` in record order and keeps only what the results file needs."""

    def __init__(self, samples_path: Path, *, official: bool, journal: Any = None,
                 left_out: frozenset[str] = frozenset(), failed_as_empty: bool = False) -> None:
        self.path, self.official, self.journal, self.left_out = samples_path, official, journal, left_out
        self.failed_as_empty = failed_as_empty  # failed outputs were judged as "": the row records that text
        self.missing_ids: list[str] = []  # records left out for want of a saved prediction
        samples_path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp_path = samples_path.with_name(f".{samples_path.name}.{os.getpid()}.tmp")
        self._fh = open(self._tmp_path, "w", encoding="utf-8")
        self.tallies = MetricTallies()
        self.judged_records = self.empty_outputs = self.truncated_outputs = self.off_label_count = 0
        self.failed_ids: list[str] = []
        self.unjudged_ids: list[str] = []
        self.failed_cut = 0  # failed model outputs whose every answer was cut at the token budget
        self.unjudged_cut = 0  # unjudged records whose failed judge call had every answer cut at the token budget
        self.unparseable_ids: list[str] = []
        self.off_label: list[OffLabelAnswer] = []

    def __call__(self, record: Record, done: tuple[Any, RecordVerdict] | None) -> None:
        """Write one finished record (``done`` is None for an excluded record) and count it."""
        if done is None:
            missing = not record.excluded and record.id in self.left_out
            if missing:
                self.missing_ids.append(record.id)
            self._write({"record_id": record.id, "status": "excluded",
                         "excluded_reason": MISSING_PREDICTION if missing else record.excluded_reason,
                         "category": record.breakdown_category, "record_type": record.record_type})
            return
        out, verdict = done
        row = verdict.to_dict()
        text = None if out is None else out.output
        if out is not None and not out.ok and self.failed_as_empty:
            text = ""
        row.update(output=text, raw_output=None if out is None else out.raw_output,
                   output_error=None if out is None else out.error,
                   output_cut=None if out is None else out.finish_reason == "length")  # cut at the token budget
        self._write(row)
        if self.journal is not None and out is not None:
            self.journal.keep(out)
        self._count(out, verdict)

    def _count(self, out: Any, verdict: RecordVerdict) -> None:
        self.judged_records += 1
        if out is None or not out.ok:
            self.failed_ids.append(verdict.record_id)
            self.failed_cut += out is not None and is_cut_failure(out.error)
        else:
            self.empty_outputs += not (out.output or "").strip()
            self.truncated_outputs += out.finish_reason == "length"
        if verdict.status in SCORED_STATUSES:  # an unparseable record is scored too (listed below as well)
            self.tallies.add(verdict)
        if verdict.status == "unjudged":
            self.unjudged_ids.append(verdict.record_id)
            self.unjudged_cut += any(is_cut_failure(v.error) for v in [*verdict.targets, *verdict.keep])
        elif verdict.status == "unparseable":
            self.unparseable_ids.append(verdict.record_id)
        if self.official:
            found = off_label_answers([verdict])
            self.off_label_count += len(found)
            self.off_label.extend(found[: max(0, OFF_LABEL_QUOTED - len(self.off_label))])

    def _write(self, row: dict[str, Any]) -> None:
        self._fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n")

    def commit(self) -> None:
        """Move the finished samples file into place (fsync, then an atomic rename)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self._tmp_path, self.path)

    def close(self) -> None:
        """Drop an uncommitted samples file."""
        if not self._fh.closed:
            self._fh.close()
        self._tmp_path.unlink(missing_ok=True)
