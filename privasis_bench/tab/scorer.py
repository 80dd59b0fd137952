"""The ``tab`` scorer: TAB documents in, system spans per document, TAB's measures and sample rows out.

The runner drives it (:class:`~privasis_bench.tasks.scoring.OutputScorer`) through four calls: :meth:`TabScorer.records` (documents as
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
from collections import Counter
from pathlib import Path
from typing import Any

from privasis_bench.data.records import Record
from privasis_bench.data.spacy_pipelines import check_spacy_pipeline
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.errors import DataError, PrivasisError, TaskConfigError
from privasis_bench.fsutil import read_text
from privasis_bench.tab.alignment import ALIGNMENT_METHOD, masked_spans
from privasis_bench.tab.bootstrap import bootstrap_intervals, paired_comparison
from privasis_bench.tab.instructions import instruction_for, read_instruction_template
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.metrics import RATIOS, DocTally, empty_measures, pooled, tally_document, total
from privasis_bench.tab.records import TabDocument
from privasis_bench.tab.saved import is_masked_output, read_saved_outputs
from privasis_bench.tab.shown import scored_spans
from privasis_bench.tab.spans import read_masked_output, span_notices, write_masked_output
from privasis_bench.tab.tokens import IgnoreMap, spacy_ignore_map
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_ref
from privasis_bench.tasks.scoring import OutputScorer

ARGS = ("instruction_template", "spacy_model", "data_file_name", "data_dir_env", "weighted_precision")


class TabScorer(OutputScorer):
    """TAB's evaluation for one task (see the module docstring)."""

    name = "tab"

    @staticmethod
    def rescore(rows: list[dict[str, Any]], stored: dict[str, Any], **settings: Any) -> dict[str, Any]:
        """Metrics from samples rows, for ``privasis-bench rescore`` (see :func:`rescore_rows`)."""
        return rescore_rows(rows, stored, **settings)

    @classmethod
    def rederived_row_problems(cls, stored: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
        """Rows of a shipped-data run whose derived fields differ from a fresh scoring (see :mod:`.rederive`)."""
        from privasis_bench.tab.rederive import rederived_row_problems

        return rederived_row_problems(stored, rows, cls)

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
        if task.scorer_args.get("spacy_model") is not None:  # a name or a directory, said before anything runs
            try:
                check_spacy_pipeline(str(task.scorer_args["spacy_model"]), "spacy_model")
            except PrivasisError as exc:
                raise TaskConfigError(where, "scorer_args.spacy_model", str(exc).removeprefix("spacy_model: ")) from None
        self.weighted = bool(task.scorer_args.get("weighted_precision", False))
        self._mlm = None
        if self.weighted:  # fail fast: before any model call, not after the run
            from privasis_bench.tab.weighting import load_model

            self._mlm = load_model()
        self._ignore = ignore
        self.documents: dict[str, TabDocument] = {}
        self._all_ids: set[str] = set()
        self.predictions_format = "tab-masked-spans"
        #: Lines a reader must see (documents left out, spans that mask less than they seem, split mismatch).
        self.notices: list[str] = []

    @property
    def ignore(self) -> IgnoreMap:
        """The token/POS map (spaCy is loaded on first use)."""
        if self._ignore is None:
            self._ignore = spacy_ignore_map(self.task.scorer_args.get("spacy_model"))
        return self._ignore

    def data_files(self) -> list[str]:
        """The task's TAB files: ``dataset.data_files``, else the first of :func:`data_dir_candidates` that exists."""
        if self.task.dataset.data_files:
            return list(self.task.dataset.data_files)
        env, name = self.task.scorer_args.get("data_dir_env"), self.task.scorer_args.get("data_file_name")
        folder = os.environ.get(str(env)) if env else None
        tried = data_dir_candidates(folder, str(name)) if folder and name else []
        found = next((p for p in tried if p.is_file()), None)
        if found is not None:
            return [str(found)]
        # The variable is named, never its value: a task may point data_dir_env at any variable, a secret included.
        looked = (f"; the folder ${env} names holds none of: {', '.join(_relative(p, folder) for p in tried)}"
                  if tried else (f" (or set {env} to its folder)" if env else ""))
        raise DataError(f"{self.task.task}: TAB's data is not bundled; download {name or 'echr_<split>.json'} from "
                        f"github.com/NorskRegnesentral/text-anonymization-benchmark and pass --data-files PATH{looked}")

    @staticmethod
    def write_masks(path: str | Path, spans: dict[str, Any]) -> None:
        """Write ``{doc_id: spans}`` in TAB's masked-output format (``export-tab-masks``)."""
        write_masked_output(path, spans)

    @staticmethod
    def data_source(task: TaskConfig) -> str:
        """Where the task's data comes from, for ``tasks list``: its files, or the GitHub file it must be given."""
        if task.dataset.data_files:
            return ", ".join(task.dataset.data_files)
        name = task.scorer_args.get("data_file_name") or task.dataset.name or "echr_<split>.json"
        env = task.scorer_args.get("data_dir_env")
        return (f"github.com/{task.dataset.path or 'NorskRegnesentral/text-anonymization-benchmark'} {name} "
                f"(not bundled: --data-files{f' or ${env}' if env else ''})")

    def records(self, limit: int | None = None) -> list[Record]:
        """The task's documents as records (text and instruction), in file order (``limit``: the first N)."""
        every = load_documents(self.data_files())
        if not every:
            raise DataError(f"{self.task.task}: {', '.join(self.data_files())} holds no documents")
        self.notices.extend(split_notices(self.task, every, self.data_files()))
        self._all_ids = {d.doc_id for d in every}
        docs = every[:limit] if limit is not None else every
        self.documents = {d.doc_id: d for d in docs}
        return [_record(d, instruction_for(d, self.template)) for d in docs]

    def read_predictions(self, path: str) -> dict[str, SystemOutput]:
        """A masked-output file ``{doc_id: [[start, end], ...]}`` as outputs, for the documents being scored.

        As TAB's official script does, a document the file omits is left out of every measure (no output, and not
        a failed one); ids of the data's documents past ``--limit`` are not scored; ids the data does not hold are
        refused. What was left out, and spans that mask less than they seem, are said in :attr:`notices`."""
        name = Path(path).name
        if Path(path).is_file() and not is_masked_output(read_text(path, "predictions file")):
            self.predictions_format = "saved-outputs"
            return self._saved_outputs(path)
        self.predictions_format = "tab-masked-spans"
        spans = read_masked_output(path, {d: "" for d in self._all_ids})
        beyond = [d for d in spans if d not in self.documents]
        if beyond:
            self.notices.append(f"{name}: {len(beyond)} document(s) of the file are past --limit "
                                f"({len(self.documents)} documents scored) and were not scored")
        omitted = [d for d in self.documents if d not in spans]
        if omitted:
            self.notices.append(f"{name}: {len(omitted)} of {len(self.documents)} document(s) are not in the file and "
                                "were left out of every measure, as TAB's official script does (see "
                                f"left_out_records): {', '.join(omitted[:5])}{' ...' if len(omitted) > 5 else ''}")
        texts = {d: doc.text for d, doc in self.documents.items()}
        self.notices.extend(span_notices(name, spans, texts))
        return {doc_id: SystemOutput(text=None, spans=spans[doc_id]) for doc_id in self.documents if doc_id in spans}

    def _saved_outputs(self, path: str) -> dict[str, SystemOutput]:
        """This harness's saved rows (:mod:`privasis_bench.tab.saved`) for the documents being scored."""
        saved = read_saved_outputs(path)
        name = Path(path).name
        unknown = [d for d in saved if d not in self._all_ids]
        if unknown:
            raise DataError(f"{path}: document {unknown[0]!r} is not in the task's data; pass the matching --data-files")
        omitted = [d for d in self.documents if d not in saved]
        if omitted:
            self.notices.append(f"{name}: {len(omitted)} of {len(self.documents)} document(s) have no saved output and "
                                f"were left out of every measure (see left_out_records): {', '.join(omitted[:5])}"
                                f"{' ...' if len(omitted) > 5 else ''}")
        return {d: saved[d] for d in self.documents if d in saved}

    def stats(self) -> dict[str, Any]:
        """What ``data inspect`` shows for the loaded documents: counts of documents, annotators and mentions."""
        docs = list(self.documents.values())
        mentions = [m for d in docs for ms in d.annotations.values() for m in ms]
        return {"documents": len(docs), "dataset_type": dict(Counter(d.dataset_type for d in docs)),
                "annotators": len({a for d in docs for a in d.annotators}),
                "annotators_per_document": dict(sorted(Counter(len(d.annotators) for d in docs).items())),
                "mentions": len(mentions), "identifier_type": dict(Counter(m.identifier_type for m in mentions)),
                "entity_type": dict(Counter(m.entity_type for m in mentions)),
                "documents_without_mentions_to_mask": sum(1 for d in docs if not any(
                    m.needs_masking for ms in d.annotations.values() for m in ms)),
                "characters_mean": round(sum(len(d.text) for d in docs) / len(docs)) if docs else 0}

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
        if out is not None and out.error is None and out.spans is not None:  # counted where the output shows it
            given = [tuple(s) for s in out.spans]
            return (scored_spans(doc.text, given, out.text) if out.text is not None else given), "system"
        if out is not None and out.error is None and out.text is not None:
            return masked_spans(doc.text, out.text), "alignment"
        if failed_as_empty:
            return masked_spans(doc.text, ""), "failed_as_empty"
        return None

    def score(self, outputs: dict[str, SystemOutput], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """TAB's measures over the scored documents, and one samples row per document (in document order).

        A document with no output at all (a predictions file that omits it) is left out (``left_out`` in its
        row); a document no annotator marked a mention needing masking in is scored, but has no recall (None) and
        a notice says so."""
        tallies: list[DocTally] = []
        rows: list[dict[str, Any]] = []
        nothing_to_recall: list[str] = []
        for doc in self.documents.values():
            out = outputs.get(doc.doc_id)
            if out is None:
                rows.append({"id": doc.doc_id, "scorer": self.name, "output": None, "error": None, "scored": False,
                             "left_out": "not in the predictions file"})
                continue
            found = self.spans_for(doc, out, failed_as_empty)
            row: dict[str, Any] = {"id": doc.doc_id, "scorer": self.name, "output": out.text, "error": out.error,
                                   "scored": found is not None}
            if found is not None:
                spans, source = found
                tally = tally_document(doc, spans, self.ignore)
                tallies.append(tally)
                if not tally.counts["tok_total"]:
                    nothing_to_recall.append(doc.doc_id)
                row.update(masked_spans=[list(s) for s in spans], span_source=source,
                           counts=dict(tally.counts), by_type=tally.by_type, missed=tally.missed,
                           measures=_rounded(pooled(tally)))
                if source == "system" and out.text is not None and [tuple(s) for s in out.spans] != spans:
                    row["reported_spans"] = [list(s) for s in out.spans]  # what the system claimed, cut above
                if source == "system" and out is not None and out.replacements is not None:
                    row["replacements"] = list(out.replacements)  # what the tool wrote in each masked span
            rows.append(row)
        if nothing_to_recall:
            self.notices.append(f"{len(nothing_to_recall)} document(s) have no annotated mention needing masking "
                                f"(no annotations, or only NO_MASK ones): they add nothing to the recall measures, and "
                                f"their own recall is null, not 0: {', '.join(nothing_to_recall[:5])}"
                                f"{' ...' if len(nothing_to_recall) > 5 else ''}")
        metrics = summarize(tallies, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence)
        empty = empty_measures(metrics)
        if empty:
            self.notices.append(f"nothing to count for {', '.join(empty)} in the scored documents: reported as null "
                                "(TAB's script prints 0; see official_rounded)")
        metrics["documents"] = len(self.documents)
        metrics["annotators"] = sorted({a for d in self.documents.values() for a in d.annotators})
        if self.weighted:
            from privasis_bench.tab.weighting import weighted_precision

            metrics.update(weighted_precision(list(self.documents.values()),
                                              {r["id"]: r["masked_spans"] for r in rows if r["scored"]}, self._mlm))
        return metrics, rows


def _relative(path: Path, folder: str) -> str:
    """``path`` inside ``folder`` without the folder (which may come from an environment variable)."""
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) and path != Path(folder) else path.name


def data_dir_candidates(folder: str, name: str) -> list[Path]:
    """Where a data folder may hold TAB's file ``name`` (e.g. ``echr_dev.json``), in the order looked at: the file
    itself, its split name alone (``dev.json``), and the same inside a clone of the repository or its unpacked
    GitHub archive (``text-anonymization-benchmark[-master|-main]/``). A path to the file itself is taken too."""
    base = Path(folder)
    if base.is_file():
        return [base]
    names = [name, name.removeprefix("echr_")] if name.startswith("echr_") else [name]
    subdirs = [base] + [base / f"text-anonymization-benchmark{tail}" for tail in ("", "-master", "-main")]
    return [d / n for d in subdirs for n in names]


def split_notices(task: TaskConfig, docs: list[TabDocument], files: list[str]) -> list[str]:
    """Refuse data whose documents all belong to another split than the task's (``tab_dev`` on ``echr_test.json``);
    a notice when only some of them do."""
    want = task.dataset.split
    if not want:
        return []
    typed = [d for d in docs if d.dataset_type]  # a document without the field says nothing about its split
    other = Counter(d.dataset_type for d in typed if d.dataset_type != want)
    if not other:
        return []
    found = ", ".join(f"{n} {kind!r}" for kind, n in other.most_common())
    if sum(other.values()) == len(docs):  # every document belongs to another split
        kinds = " or ".join(repr(k) for k in other)
        raise DataError(f"{', '.join(files)}: every document has dataset_type {kinds} but task "
                        f"{task.task} is the {want!r} split (dataset.split); pass the {want} file, or use the task "
                        "of that split (tab_dev: echr_dev.json, tab_test: echr_test.json)")
    return [f"{len(docs) - sum(other.values())} document(s) are of the task's split {want!r}, but {found} "
            "document(s) of another split were scored with them (dataset_type)"]


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
    summed = total(tallies)
    values = pooled(summed)
    return {
        "scorer": "tab", **values, "scored_documents": len(tallies),
        "official_rounded": _rounded(pooled(summed, official=True)),
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
    return {k: ({k2: round(v2, 3) for k2, v2 in v.items()} if isinstance(v, dict) else
                None if v is None else round(v, 3)) for k, v in values.items()}


def _record(doc: TabDocument, instruction: str) -> Record:
    return Record(id=doc.doc_id, record_type="tab", text=doc.text, base_instruction=instruction,
                  smoothed_instruction=instruction, reference_sanitized="", targets=(), keep=(),
                  category=doc.dataset_type or None, extra={"task": doc.task, "meta": doc.meta})
