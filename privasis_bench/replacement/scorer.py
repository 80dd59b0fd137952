"""The ``tab_replacement`` scorer: TAB documents, the paper's TPS, TRIR and NMI beside TAB's detection measures.

The runner drives it like the ``tab`` scorer (:class:`~privasis_bench.tasks.scoring.OutputScorer`): :meth:`records` (loads every model
and the background knowledge and fits the attacker first, so a bad file or an unloadable model stops the run
before any model call), :meth:`read_predictions`, :meth:`score` and :meth:`describe`. TAB's own measures come from
the ``tab`` scorer on the same outputs and stay at the top of ``metrics``; ``tps``, ``trir`` and ``nmi`` join them
(``ci`` holds bootstrap intervals over documents for TPS and TRIR; NMI, a property of the whole clustering, has
none). Settings: :mod:`privasis_bench.replacement.settings`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from privasis_bench.data.records import Record
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.errors import DataError
from privasis_bench.replacement.background import read_background
from privasis_bench.replacement.pairs import PAIRING_METHOD, Pair, aligned_pairs, replacement_pairs
from privasis_bench.replacement.settings import (
    TAB_KEYS,
    attacker,
    document_embedder,
    information_estimator,
    parse_settings,
    tps_function,
    variants,
)
from privasis_bench.replacement.summary import estimator_key, summarize_rows
from privasis_bench.tab.scorer import TabScorer
from privasis_bench.tab.tokens import IgnoreMap
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_ref
from privasis_bench.tasks.scoring import OutputScorer


class ReplacementScorer(OutputScorer):
    """TAB's detection measures plus TPS, TRIR and NMI for one task (see the module docstring)."""

    name = "tab_replacement"

    @staticmethod
    def rescore(rows: list[dict[str, Any]], stored: dict[str, Any], **settings: Any) -> dict[str, Any]:
        """Every measure again from samples rows (no model): NMI, which needs the embeddings, is carried over."""
        return summarize_rows(rows, stored, **settings)

    @staticmethod
    def compare(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
        """Paired bootstrap of TAB's measures (``privasis-bench compare``)."""
        return TabScorer.compare(rows_a, rows_b, **settings)

    def __init__(self, task: TaskConfig, ignore: IgnoreMap | None = None, segmenter: Any = None) -> None:
        where = task.source_file or task.task
        self.task = task
        self.settings = parse_settings(dict(task.scorer_args), where)
        self.document_tps = tps_function(self.settings)
        tab_args = {k: v for k, v in task.scorer_args.items() if k in TAB_KEYS}
        self.tab = TabScorer(task.model_copy(update={"scorer": "tab", "scorer_args": tab_args}), ignore)
        self._segmenter = segmenter
        self._segmenter_info: dict[str, Any] = {"segmenter": "given"}
        self.estimator: Any = None
        self.similarity: Any = None
        self.embedder: Any = None
        self.attacker: Any = None
        self.background: list = []
        self.reported: dict[str, list[Pair]] = {}

    @property
    def documents(self) -> dict[str, Any]:
        """The task's TAB documents, by id (after :meth:`records`)."""
        return self.tab.documents

    def data_files(self) -> list[str]:
        """The task's TAB files (as the tab scorer finds them)."""
        return self.tab.data_files()

    def prepare(self) -> None:
        """Load the estimators and the background knowledge and fit the attacker (each fails with one line)."""
        from privasis_bench.replacement.similarity import SentenceModel
        from privasis_bench.replacement.terms import spacy_segmenter

        s = self.settings
        if s.background:
            self.background = read_background(s.background)
        self.estimator = self.estimator or information_estimator(s)
        self.similarity = self.similarity or SentenceModel(s.similarity_model, "similarity_model")
        self.embedder = self.embedder or document_embedder(s, self.similarity)
        if self._segmenter is None:
            self._segmenter, self._segmenter_info = spacy_segmenter(self.task.scorer_args.get("spacy_model"),
                                                                    s.tps_variant)
        if self.background and self.attacker is None:
            self.attacker = attacker(s, self.task.scorer_args.get("spacy_model"))
            self.attacker.fit(self.background)

    def records(self, limit: int | None = None) -> list[Record]:
        """The documents as records; every model is loaded and the attacker trained before any is returned."""
        records = self.tab.records(limit=limit)
        self.prepare()
        return records

    def read_predictions(self, path: str) -> dict[str, SystemOutput]:
        """TAB's masked-output file (spans only: suppression), or ``{doc_id: {"output": TEXT, "replacements":
        [{"start", "end", "original"?, "replacement"}]}}`` (the sanitizer's own pairs)."""
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            raw = None
        if not isinstance(raw, dict) or not raw or not all(isinstance(v, dict) for v in raw.values()):
            return self.tab.read_predictions(path)
        out: dict[str, SystemOutput] = {}
        for doc_id, body in raw.items():
            doc = self.documents.get(doc_id)
            if doc is None:
                raise DataError(f"{path}: document {doc_id!r} is not in the task's data; pass the matching --data-files")
            pairs = [_reported_pair(doc.text, item, f"{path}: document {doc_id!r}: replacement {i + 1}")
                     for i, item in enumerate(body.get("replacements") or [])]
            text = body.get("output")
            if not isinstance(text, str):
                raise DataError(f"{path}: document {doc_id!r}: 'output' must be the sanitized text (a string)")
            self.reported[doc_id] = pairs
            out[doc_id] = SystemOutput(text=text, spans=[(p.start, p.end) for p in pairs])
        for doc_id in self.documents:
            out.setdefault(doc_id, SystemOutput(text=None, error=f"document not in the predictions file {Path(path).name}"))
        return out

    def pairs_for(self, doc_id: str, text: str, row: dict[str, Any]) -> tuple[list[Pair], str]:
        """The document's span <-> replacement pairs and where they came from."""
        output, spans, source = row.get("output"), row.get("masked_spans") or [], row.get("span_source")
        if doc_id in self.reported:
            return self.reported[doc_id], "predictions"
        if output is None:  # spans without text (TAB's masked-output file) or a failed output scored as empty
            return [Pair(s, e, text[s:e], "") for s, e in spans], "suppression"
        if source == "system":
            return replacement_pairs(text, output, spans), "system"
        return aligned_pairs(text, output), "alignment"

    def score(self, outputs: dict[str, SystemOutput], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """TAB's measures, then per document TPS and the attacker's guess, then NMI; one row per document."""
        if self.estimator is None:
            self.prepare()
        for doc_id, out in outputs.items():  # before anything is counted: spans must lie inside their document
            text = self.documents[doc_id].text if doc_id in self.documents else None
            bad = next(((s, e) for s, e in (out.spans or []) if not 0 <= s < e <= len(text or "")), None)
            if text is not None and bad:
                raise DataError(f"document {doc_id!r}: reported span {list(bad)} does not match its text "
                                f"({len(text)} characters)")
        tab_metrics, rows = self.tab.score(outputs, bootstrap_samples=0, seed=seed, confidence=confidence,
                                           failed_as_empty=failed_as_empty)
        scored = [r for r in rows if r["scored"]]
        work = [(r, self.documents[r["id"]].text, *self.pairs_for(r["id"], self.documents[r["id"]].text, r))
                for r in scored]
        sanitized = []
        for row, text, pairs, source in work:
            result = self.document_tps(text, pairs, self.estimator, self.similarity, self._segmenter)
            row.update(replacement_source=source, **result.to_dict(), individual_id=row["id"])
            sanitized.append(row["output"] if row.get("output") is not None else _suppressed(text, pairs))
        if self.attacker is not None and work:
            known = {d.individual_id for d in self.background}
            truths = {"truths": [r["individual_id"] for r in scored]} if getattr(
                self.attacker, "selects_on_attacked", False) else {}  # the TRI authors' best-epoch selection
            for row, guess in zip(scored, self.attacker.predict(sanitized, **truths)):
                row.update(trir_guess=guess, reidentified=guess == row["individual_id"],
                           in_background=row["individual_id"] in known)
        nmi = None
        if len(work) > self.settings.clustering.k:
            from privasis_bench.replacement.nmi import clustering_nmi

            nmi = clustering_nmi(self.embedder.embed([t for _, t, _, _ in work]), self.embedder.embed(sanitized),
                                 self.settings.clustering)
        carried = ("documents", "annotators", "weighted_token_precision", "weighted_mention_precision")
        stored = {**{k: tab_metrics[k] for k in carried if k in tab_metrics}, "nmi": nmi}
        metrics = summarize_rows(rows, stored, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence)
        metrics["estimator_key"] = estimator_key(self.describe())
        return metrics, rows

    def describe(self) -> dict[str, Any]:
        """Everything that produced the numbers: TAB's settings, each estimator and model, the attack, NMI's settings."""
        s = self.settings
        embedded = self.embedder.describe() if self.embedder else {"model": s.nmi_model}
        return {
            **({"variant": variants(s)} if variants(s) else {}),
            "name": self.name, "tab": self.tab.describe(), "pairing": PAIRING_METHOD,
            "information_content": self.estimator.describe() if self.estimator else {"name": s.information_content},
            "similarity": {"equation": "max(0, cos)", **(self.similarity.describe() if self.similarity else
                                                         {"model": s.similarity_model})},
            "spans": self._segmenter_info,
            "trir": ({**self.attacker.describe(), "background": file_ref(s.background),
                      "background_documents": len(self.background)} if self.attacker else None),
            "nmi": {**embedded, **s.clustering.to_dict(),
                    "embedding": embedded.get("embedding", "sentence-transformers pooling, truncated to the window")},
        }


def _reported_pair(text: str, item: Any, where: str) -> Pair:
    """One replacement a predictions file reports, checked against the document's text."""
    if not isinstance(item, dict) or not all(k in item for k in ("start", "end", "replacement")):
        raise DataError(f"{where}: expected an object with start, end and replacement")
    start, end = item["start"], item["end"]
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)) or not 0 <= start < end <= len(text):
        raise DataError(f"{where}: span [{start}, {end}] does not match its text ({len(text)} characters)")
    if "original" in item and item["original"] != text[start:end]:
        raise DataError(f"{where}: original {item['original']!r} does not match the text at [{start}, {end}) "
                        f"({text[start:end]!r})")
    if not isinstance(item["replacement"], str):
        raise DataError(f"{where}: replacement must be a string")
    return Pair(start, end, text[start:end], item["replacement"])


def _suppressed(text: str, pairs: list[Pair]) -> str:
    """The text with every paired span replaced by its replacement (for outputs known only by their spans)."""
    out, last = [], 0
    for p in sorted(pairs, key=lambda p: p.start):
        out += [text[last:p.start], p.replacement]
        last = p.end
    return "".join(out + [text[last:]])
