"""The ``tab`` scorer: TAB documents in, system spans per document, TAB's measures and sample rows out.

The generic pipeline (``pipeline/scored``) drives it through four calls: :meth:`TabScorer.records` (documents as
the records every adapter understands, each with its instruction), :meth:`TabScorer.read_predictions` (TAB's
masked-output file), :meth:`TabScorer.score` (outputs -> metrics and one samples row per document) and
:meth:`TabScorer.describe` (what results record about the scorer). Spans come from the system when it reports them
(masking systems), else from aligning its rewrite to the original (:mod:`privasis_bench.tab.alignment`).

Task settings (``scorer_args``): ``instruction_template`` (required, a file with ``{person}``), ``spacy_model``
(default: :func:`~privasis_bench.tab.tokens.default_pipeline`), ``data_file_name`` with ``data_dir_env`` (where a
task that ships no data finds TAB's file when ``--data-files`` is not given), ``weighted_precision`` (false).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from privasis_bench.data.records import Record
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.errors import DataError, TaskConfigError
from privasis_bench.tab.alignment import ALIGNMENT_METHOD, masked_spans
from privasis_bench.tab.bootstrap import bootstrap_intervals, paired_comparison
from privasis_bench.tab.instructions import instruction_for, read_instruction_template
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.metrics import RATIOS, DocTally, pooled, tally_document, total
from privasis_bench.tab.records import TabDocument
from privasis_bench.tab.spans import read_masked_output
from privasis_bench.tab.tokens import IgnoreMap, spacy_ignore_map
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_ref

ARGS = ("instruction_template", "spacy_model", "data_file_name", "data_dir_env", "weighted_precision")


class TabScorer:
    """TAB's evaluation for one task (see the module docstring)."""

    name = "tab"

    @staticmethod
    def rescore(rows: list[dict[str, Any]], stored: dict[str, Any], **settings: Any) -> dict[str, Any]:
        """Metrics from samples rows, for ``privasis-bench rescore`` (see :func:`rescore_rows`)."""
        return rescore_rows(rows, stored, **settings)

    @staticmethod
    def compare(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
        """Paired bootstrap of two runs' samples rows, for ``privasis-bench compare``."""
        return paired_comparison(tallies_from_rows(rows_a), tallies_from_rows(rows_b), **settings)

    def __init__(self, task: TaskConfig, ignore: IgnoreMap | None = None) -> None:
        where = task.source_file or task.task
        unknown = sorted(set(task.scorer_args) - set(ARGS))
        if unknown:
            raise TaskConfigError(where, "scorer_args", f"unknown key(s) {', '.join(unknown)}; accepted: {', '.join(ARGS)}")
        if not task.scorer_args.get("instruction_template"):
            raise TaskConfigError(where, "scorer_args.instruction_template", "the tab scorer needs an instruction template")
        self.task = task
        self.template = read_instruction_template(str(task.scorer_args["instruction_template"]), where)
        self.weighted = bool(task.scorer_args.get("weighted_precision", False))
        self._mlm = None
        if self.weighted:  # fail fast: before any model call, not after the run
            from privasis_bench.tab.weighting import load_model

            self._mlm = load_model()
        self._ignore = ignore
        self.documents: dict[str, TabDocument] = {}

    @property
    def ignore(self) -> IgnoreMap:
        """The token/POS map (spaCy is loaded on first use)."""
        if self._ignore is None:
            self._ignore = spacy_ignore_map(self.task.scorer_args.get("spacy_model"))
        return self._ignore

    def data_files(self) -> list[str]:
        """The task's TAB files: ``dataset.data_files``, else ``$<data_dir_env>/<data_file_name>``."""
        if self.task.dataset.data_files:
            return list(self.task.dataset.data_files)
        env, name = self.task.scorer_args.get("data_dir_env"), self.task.scorer_args.get("data_file_name")
        folder = os.environ.get(str(env)) if env else None
        if folder and name and (Path(folder) / str(name)).is_file():
            return [str(Path(folder) / str(name))]
        raise DataError(f"{self.task.task}: TAB's data is not bundled; download {name or 'echr_<split>.json'} from "
                        f"github.com/NorskRegnesentral/text-anonymization-benchmark and pass --data-files PATH"
                        + (f" (or set {env} to its folder)" if env else ""))

    def records(self, limit: int | None = None) -> list[Record]:
        """The task's documents as records (text and instruction), in file order."""
        docs = load_documents(self.data_files(), limit=limit)
        if not docs:
            raise DataError(f"{self.task.task}: {', '.join(self.data_files())} holds no documents")
        self.documents = {d.doc_id: d for d in docs}
        return [_record(d, instruction_for(d, self.template)) for d in docs]

    def read_predictions(self, path: str) -> dict[str, SystemOutput]:
        """A masked-output file ``{doc_id: [[start, end], ...]}`` as outputs. A document the file omits has no
        output (the official script leaves it out of every measure; here it is also listed as a failed output)."""
        spans = read_masked_output(path, {d: doc.text for d, doc in self.documents.items()})
        return {doc_id: SystemOutput(text=None, spans=spans[doc_id]) if doc_id in spans else
                SystemOutput(text=None, error=f"document not in the predictions file {Path(path).name}")
                for doc_id in self.documents}

    def describe(self) -> dict[str, Any]:
        """Scorer settings for results: tokenizer pipeline, alignment method, the official script it follows."""
        path = str(self.task.scorer_args["instruction_template"])
        return {"name": self.name, "official_script": "NorskRegnesentral/text-anonymization-benchmark evaluation.py",
                "tokens": self.ignore.description, "alignment": ALIGNMENT_METHOD,
                "weighted_precision": self.weighted,
                "instruction_template": {"template": file_ref(path),
                                         "sha256": hashlib.sha256(self.template.encode("utf-8")).hexdigest()}}

    def spans_for(self, doc: TabDocument, out: SystemOutput | None, failed_as_empty: bool) -> tuple[list, str] | None:
        """The document's masked spans and where they came from; None when its output failed (unscored)."""
        if out is not None and out.error is None and out.spans is not None:
            return [tuple(s) for s in out.spans], "system"
        if out is not None and out.error is None and out.text is not None:
            return masked_spans(doc.text, out.text), "alignment"
        if failed_as_empty:
            return masked_spans(doc.text, ""), "failed_as_empty"
        return None

    def score(self, outputs: dict[str, SystemOutput], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """TAB's measures over the scored documents, and one samples row per document (in document order)."""
        tallies: list[DocTally] = []
        rows: list[dict[str, Any]] = []
        for doc in self.documents.values():
            out = outputs.get(doc.doc_id)
            found = self.spans_for(doc, out, failed_as_empty)
            row: dict[str, Any] = {"id": doc.doc_id, "scorer": self.name, "output": out.text if out else None,
                                   "error": (out.error if out else "no output"), "scored": found is not None}
            if found is not None:
                spans, source = found
                tally = tally_document(doc, spans, self.ignore)
                tallies.append(tally)
                row.update(masked_spans=[list(s) for s in spans], span_source=source,
                           counts=dict(tally.counts), by_type=tally.by_type, missed=tally.missed,
                           measures=_rounded(pooled(tally)))
                if source == "system" and out is not None and out.replacements is not None:
                    row["replacements"] = list(out.replacements)  # what the tool wrote in each masked span
            rows.append(row)
        metrics = summarize(tallies, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence)
        metrics["documents"] = len(self.documents)
        metrics["annotators"] = sorted({a for d in self.documents.values() for a in d.annotators})
        if self.weighted:
            from privasis_bench.tab.weighting import weighted_precision

            metrics.update(weighted_precision(list(self.documents.values()),
                                              {r["id"]: r["masked_spans"] for r in rows if r["scored"]}, self._mlm))
        return metrics, rows


def rescore_rows(rows: list[dict[str, Any]], stored: dict[str, Any], *, bootstrap_samples: int, seed: int,
            confidence: float) -> dict[str, Any]:
    """The metrics again from samples rows (no data, no spaCy); weighted precision, which needs the masked
    language model, is carried over from ``stored``."""
    metrics = summarize(tallies_from_rows(rows), bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence)
    for key in ("documents", "annotators", "weighted_token_precision", "weighted_mention_precision"):
        if key in stored:
            metrics[key] = stored[key]
    return metrics


def summarize(tallies: list[DocTally], *, bootstrap_samples: int, seed: int, confidence: float) -> dict[str, Any]:
    """Pooled measures (unrounded, and rounded to 3 decimals as the official script prints them) with intervals."""
    values = pooled(total(tallies))
    summed = total(tallies)
    return {
        "scorer": "tab", **values, "scored_documents": len(tallies),
        "official_rounded": _rounded(values),
        "counts": {k: summed.counts[k] for pair in RATIOS.values() for k in pair},
        "ci": bootstrap_intervals(tallies, samples=bootstrap_samples, seed=seed, confidence=confidence),
        "bootstrap": {"samples": bootstrap_samples, "seed": seed, "confidence": confidence, "unit": "document"},
    }


def tallies_from_rows(rows: list[dict[str, Any]]) -> list[DocTally]:
    """Document tallies back from samples rows (rescoring needs neither the data nor spaCy)."""
    out = []
    for row in rows:
        if row.get("scored"):
            t = DocTally(str(row["id"]))
            t.counts.update(row.get("counts") or {})
            t.by_type = {k: list(v) for k, v in (row.get("by_type") or {}).items()}
            out.append(t)
    return out


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: ({k2: round(v2, 3) for k2, v2 in v.items()} if isinstance(v, dict) else round(v, 3))
            for k, v in values.items()}


def _record(doc: TabDocument, instruction: str) -> Record:
    return Record(id=doc.doc_id, record_type="tab", text=doc.text, base_instruction=instruction,
                  smoothed_instruction=instruction, reference_sanitized="", targets=(), keep=(),
                  category=doc.dataset_type or None, extra={"task": doc.task, "meta": doc.meta})
