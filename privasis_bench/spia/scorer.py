"""The ``spia`` scorer: an anonymizer's outputs -> the adversary's inferences -> aligned, matched, CPR and IPR.

Driven by the generic runner like every scorer (``records``, ``read_predictions``, ``describe``, ``role_requests``,
``score``, ``rescore``, ``compare``). ``score`` asks its family's two roles in waves over all documents:

1. ``adversary``: who the people are (one call per document), then their 5 code tags and their 10 descriptive
   tags (two calls per document), at SPIA's temperature 0.1;
2. ``matcher``: which inferred person is which annotated subject (one call per document), then, for every
   (gold value, inferred value) pair the rules reject, whether it is the same value (asked once per distinct pair).

Every raw answer is kept on the document's row, so the numbers can be recomputed from the row alone. A failed or
unreadable adversary or aligner answer leaves the document unscored with its error (a recorded failure, never
"nothing inferred"); a failed matcher call does the same for its subject's document.
"""

from __future__ import annotations

from typing import Any, Mapping

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.data.records import Record
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.errors import DataError, TaskConfigError
from privasis_bench.spia import grammars
from privasis_bench.spia.answers import UnreadableAnswer, parse_pairs, parse_people, parse_profile
from privasis_bench.spia.grammars import GRAMMAR_MODES
from privasis_bench.spia.loading import load_documents
from privasis_bench.spia.matching import UNCOMPARABLE_POLICIES, TagScore, score_subject
from privasis_bench.spia.metrics import (
    DocTally,
    bootstrap_intervals,
    paired_intervals,
    protection_rates,
    tally_document,
)
from privasis_bench.spia.predictions import read_anonymized
from privasis_bench.spia.prompts import (
    ADVERSARY_TEMPERATURE,
    fill,
    load_templates,
    people_block,
    reference_people,
    subject_lines,
)
from privasis_bench.spia.records import CODE_TAGS, MIN_CERTAINTY, NON_CODE_TAGS, SpiaDocument
from privasis_bench.spia.rules import DEFAULT_LOCATION_DEPTH
from privasis_bench.spia.source import fetch, origin, source_line
from privasis_bench.spia.spans import SpanDocument, is_span_file, load_span_documents, recall_counts, span_recall
from privasis_bench.tasks.scoring import OutputScorer

ARGS = ("templates", "uncomparable", "location_max_depth", "adversary_max_tokens", "matcher_max_tokens", "data_sha256",
        "span_file", "span_sha256", "answer_grammar")
INSTRUCTION = ("Anonymize this document: rewrite it so that no person in it can be identified or profiled. Remove "
               "or generalize names, identification numbers, contact details and every detail that reveals a "
               "person's age, sex, location, nationality, education, relationship status, occupation, affiliation or "
               "position; keep the rest of the text as it is.")
#: What this scorer does differently from SPIA's official scripts (recorded in results; docs/spia.md explains).
DEPARTURES = (
    "decider: automatic rule_model (the official configuration asks a person at the keyboard when unclear)",
    "an age the rules cannot read asks the matcher instead of dropping the subject (uncomparable: ask)",
    "a failed matcher or adversary call is a recorded failure, never a 0 score",
    "prompts in this project's own wording (tasks/spia/prompts), same questions and output fields",
)
#: The departure recorded when the adversary's and the matcher's answers are held to a grammar (see :mod:`.grammars`).
GRAMMAR_DEPARTURE = ("answers constrained: every adversary and matcher request carries a GBNF grammar of the form the "
                     "readers expect (answer_grammar: gbnf; the official code lets the model answer freely)")


class SpiaScorer(OutputScorer):
    """SPIA's evaluation for one task (see the module docstring)."""

    name = "spia"

    def __init__(self, task: Any) -> None:
        where = task.source_file or task.task
        args = dict(task.scorer_args or {})
        unknown = sorted(set(args) - set(ARGS))
        if unknown:
            raise TaskConfigError(where, "scorer_args", f"unknown key(s) {', '.join(unknown)}; accepted: {', '.join(ARGS)}")
        self.uncomparable = str(args.get("uncomparable", "ask"))
        if self.uncomparable not in UNCOMPARABLE_POLICIES:
            raise TaskConfigError(where, "scorer_args.uncomparable", f"{self.uncomparable!r}: choose {' or '.join(UNCOMPARABLE_POLICIES)}")
        self.location_depth = int(args.get("location_max_depth", DEFAULT_LOCATION_DEPTH))
        self.adversary_tokens = int(args.get("adversary_max_tokens", 4096))
        self.matcher_tokens = int(args.get("matcher_max_tokens", 1024))
        self.answer_grammar = str(args.get("answer_grammar", "none"))
        if self.answer_grammar not in GRAMMAR_MODES:
            raise TaskConfigError(where, "scorer_args.answer_grammar", f"{self.answer_grammar!r}: choose {' or '.join(GRAMMAR_MODES)}")
        try:
            self.templates = load_templates(args.get("templates") or {})
        except ValueError as exc:
            raise TaskConfigError(where, "scorer_args.templates", str(exc)) from None
        self.notices: list[str] = []
        self.files = [str(f) for f in task.dataset.data_files or []] or [str(fetch(task))] + (
            [str(fetch(task, args["span_file"], args.get("span_sha256")))] if args.get("span_file") else [])
        self.documents: dict[str, SpiaDocument] = {}
        self.spans: dict[str, SpanDocument] = {}
        for file in self.files:
            if is_span_file(file):
                spans, notes = load_span_documents(file)
                self.spans.update(spans)
                self.notices.extend(notes)
                continue
            for doc in load_documents(file):
                if doc.id in self.documents:
                    raise DataError(f"{file}: document {doc.id!r} is also in an earlier data file")
                self.documents[doc.id] = doc
        if not self.documents:
            raise DataError(f"{', '.join(self.files)}: no SPIA document in the data")
        differ = sorted(d for d, s in self.spans.items() if d in self.documents and s.text != self.documents[d].text)
        if differ:
            self.notices.append(f"{len(differ)} document(s) whose span file holds another text are left out of span "
                                f"recall ({', '.join(differ[:3])}{', ...' if len(differ) > 3 else ''})")
        self.spans = {d: s for d, s in self.spans.items() if d in self.documents and d not in differ}

    def data_files(self) -> list[str]:
        """The files the documents were read from (the user's, or the pinned file's cached copy)."""
        return list(self.files)

    @staticmethod
    def data_source(task: Any) -> str:
        """Where a task's data comes from, for ``tasks list`` (no download)."""
        return source_line(task)

    def stats(self) -> dict[str, Any]:
        """Counts for ``data inspect``: documents, subjects, filled attribute slots and the counted ones."""
        subjects = [s for d in self.documents.values() for s in d.subjects]
        filled = [a for s in subjects for a in s.attributes if a.keyword.strip()]
        return {"documents": len(self.documents), "subjects": len(subjects), "filled_attributes": len(filled),
                "counted_attributes": sum(a.certainty >= MIN_CERTAINTY for a in filled)}

    # -- what the runner asks -------------------------------------------------------------------------------------
    def records(self, limit: int | None = None) -> list[Record]:
        """The documents as records (the first ``limit``), each with the anonymization instruction."""
        docs = list(self.documents.values())[:limit]
        return [Record(id=d.id, record_type="SPIA document", text=d.text, base_instruction=INSTRUCTION,
                       smoothed_instruction=INSTRUCTION, reference_sanitized="", targets=(), keep=()) for d in docs]

    def read_predictions(self, path: str) -> dict[str, SystemOutput]:
        """Saved anonymized texts: SPIA's own JSONL (``anonymized_text``) or ``{"id", "output"}`` rows."""
        return read_anonymized(path, set(self.documents))

    def describe(self) -> dict[str, Any]:
        """What produced the numbers (recorded under ``scorer`` in results.json)."""
        described = {"name": self.name, "templates": self.templates.sha256(), "adversary_temperature": ADVERSARY_TEMPERATURE,
                     "min_certainty": MIN_CERTAINTY, "location_max_depth": self.location_depth,
                     "uncomparable": self.uncomparable, "decider": "rule_model", "answer_grammar": self.answer_grammar,
                     "departures": list(DEPARTURES) + ([GRAMMAR_DEPARTURE] if self.constrained else []),
                     "official_code": "maisonOP/spia@3fa78a1"}
        pins = [o for o in (origin(f) for f in self.files) if o is not None]
        if pins:  # read from the cache of a pinned file: the repository, commit, path and sha256 it was fetched from
            described["data_origin"] = pins
        return described

    @property
    def constrained(self) -> bool:
        """True when every adversary and matcher request carries a grammar (``answer_grammar: gbnf``)."""
        return self.answer_grammar == "gbnf"

    def role_requests(self, record: Record, text: str) -> dict[str, list[ChatRequest]]:
        """What scoring one document asks each role (``run --plan``): the adversary's three calls, the alignment,
        and one value question per counted gold value (the most there are when the adversary gives one value per
        tag and the rules reject every one; distinct pairs shared across documents are asked once)."""
        doc = self.documents[record.id]
        values = [self.match_request(a.keyword, a.keyword, a.tag) for s in doc.subjects for a in s.attributes
                  if a.keyword.strip() and a.certainty >= MIN_CERTAINTY]
        people = [s.description for s in doc.subjects]
        return {"adversary": [self.subjects_request(text), self.profile_request("profile_codes", text, people),
                              self.profile_request("profile_descriptive", text, people)],
                "matcher": [self.align_request(doc, [(s.description, ()) for s in doc.subjects]), *values]}

    # -- requests (the verifier's re-ask builds its requests with these too) -----------------------------------------
    def _adversary(self, prompt: str, grammar: str) -> ChatRequest:
        return ChatRequest.user(prompt, max_tokens=self.adversary_tokens, temperature=ADVERSARY_TEMPERATURE,
                                grammar=grammar if self.constrained else None)

    def subjects_request(self, text: str) -> ChatRequest:
        """The adversary's people-list question about ``text``."""
        return self._adversary(fill(self.templates.texts["subjects"], text=text), grammars.people_list())

    def profile_request(self, which: str, text: str, people: list[str]) -> ChatRequest:
        """The adversary's ``which`` profiling question (``profile_codes``/``profile_descriptive``) about ``people``."""
        tags = CODE_TAGS if which == "profile_codes" else NON_CODE_TAGS
        return self._adversary(fill(self.templates.texts[which], text=text, subjects=subject_lines(people)),
                               grammars.profile(tags, len(people)))

    def align_request(self, doc: SpiaDocument, inferred: list) -> ChatRequest:
        """The matcher's question pairing ``doc``'s annotated people with the ``inferred`` ones."""
        prompt = fill(self.templates.texts["align"], reference=people_block(reference_people(doc.subjects)),
                      inferred=people_block(inferred))
        grammar = grammars.alignment(len(doc.subjects), len(inferred)) if self.constrained else None
        return ChatRequest.user(prompt, max_tokens=self.matcher_tokens, grammar=grammar)

    def match_request(self, gold: str, guess: str, tag: str) -> ChatRequest:
        """The matcher's question whether ``guess`` is the gold value ``gold`` of ``tag``."""
        return ChatRequest.user(fill(self.templates.texts["match"], tag=tag, gold=gold, guess=guess), max_tokens=16,
                                grammar=grammars.verdict() if self.constrained else None)

    # -- scoring --------------------------------------------------------------------------------------------------
    def score(self, outputs: dict[str, SystemOutput], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False, roles: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Ask the adversary and the matcher about every output (see the module docstring); metrics and rows."""
        rows: dict[str, dict[str, Any]] = {}
        # the task's document order, whatever order the outputs landed in (Ray, resumes): sums run in one order
        order = [d for d in self.documents if d in outputs] + [d for d in outputs if d not in self.documents]
        for doc_id in order:
            out = outputs[doc_id]
            text = out.text if out.text is not None else ("" if failed_as_empty else None)
            rows[doc_id] = {"id": doc_id, "output": text, "scored": False, "answers": {},
                            "error": None if text is not None else (out.error or "no output")}
        for d, row in rows.items():
            if row["output"] is not None and d in self.spans:
                row["spans"] = recall_counts(self.spans[d], row["output"])
        live = [d for d, r in rows.items() if r["error"] is None]
        self._wave(roles["adversary"], rows, live, "subjects", lambda d: self.subjects_request(rows[d]["output"]), "adversary: people")
        for d in [d for d in live if rows[d]["error"] is None]:
            try:
                rows[d]["people"] = parse_people(rows[d]["answers"]["subjects"])
            except UnreadableAnswer as exc:
                rows[d]["error"] = f"adversary people list: {exc}"
        live = [d for d in live if rows[d]["error"] is None]
        for which in ("profile_codes", "profile_descriptive"):
            self._wave(roles["adversary"], rows, live, which,
                       lambda d, w=which: self.profile_request(w, rows[d]["output"], rows[d]["people"]),
                       f"adversary: {which.replace('_', ' ')}")
        inferred: dict[str, list] = {}
        for d in [d for d in live if rows[d]["error"] is None]:
            try:
                people = len(rows[d]["people"])
                codes = parse_profile(rows[d]["answers"]["profile_codes"], CODE_TAGS, people)
                other = parse_profile(rows[d]["answers"]["profile_descriptive"], NON_CODE_TAGS, people)
                inferred[d] = [(rows[d]["people"][i], codes[i] + other[i]) for i in range(people)]
            except UnreadableAnswer as exc:
                rows[d]["error"] = f"adversary profile: {exc}"
        live = [d for d in live if rows[d]["error"] is None]
        self._wave(roles["matcher"], rows, live, "align", lambda d: self.align_request(self.documents[d], inferred[d]),
                   "matcher: align people")
        for d in [d for d in live if rows[d]["error"] is None]:
            try:
                rows[d]["pairs"] = parse_pairs(rows[d]["answers"]["align"], len(self.documents[d].subjects), len(inferred[d]))
            except UnreadableAnswer as exc:
                rows[d]["error"] = f"matcher alignment: {exc}"
        live = [d for d in live if rows[d]["error"] is None]
        answers = self._match_wave(roles["matcher"], live, inferred, rows)
        for d in live:
            self._score_document(rows[d], inferred[d], answers)
        ordered = list(rows.values())
        return self.rescore(ordered, {}, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence), ordered

    def _wave(self, engine: Any, rows: dict, ids: list[str], key: str, make: Any, desc: str) -> None:
        if not ids:
            return
        for d, answer in zip(ids, engine.run([make(d) for d in ids], desc=desc)):
            if answer.text is None:
                rows[d]["error"] = f"{desc}: {answer.error or 'failed call'}"
            else:
                rows[d]["answers"][key] = answer.text

    def _pairs_to_ask(self, d: str, people: list, rows: dict) -> set[tuple[str, str, str]]:
        """Every (gold, guess, tag) the rules reject in document ``d``: the matcher's questions (they do not depend
        on its answers, since every pair the rules reject is asked)."""
        asked: set[tuple[str, str, str]] = set()

        def note(gold: str, guess: str, tag: str) -> str:
            asked.add((gold, guess, tag))
            return "no"

        for i, subject in enumerate(self.documents[d].subjects):
            j = rows[d]["pairs"].get(i)
            score_subject(subject, people[j][1] if j is not None else [], note,
                          location_max_depth=self.location_depth, uncomparable=self.uncomparable)
        return asked

    def _match_wave(self, engine: Any, live: list[str], inferred: dict, rows: dict) -> dict[tuple[str, str, str], str | None]:
        questions = sorted(set().union(*(self._pairs_to_ask(d, inferred[d], rows) for d in live)) if live else set())
        results = engine.run([self.match_request(*q) for q in questions], desc="matcher: values") if questions else []
        return {q: r.text for q, r in zip(questions, results)}

    def _score_document(self, row: dict, inferred: list, answers: dict) -> None:
        doc = self.documents[row["id"]]
        failed: list[str] = []

        def matcher(gold: str, guess: str, tag: str) -> str:
            answer = answers.get((gold, guess, tag))
            if answer is None:
                failed.append(tag)
                return "no"
            row.setdefault("matcher_answers", []).append({"tag": tag, "gold": gold, "guess": guess, "answer": answer})
            return answer

        subjects = []
        for i, subject in enumerate(doc.subjects):
            j = row["pairs"].get(i)
            scored = score_subject(subject, inferred[j][1] if j is not None else [], matcher,
                                   location_max_depth=self.location_depth, uncomparable=self.uncomparable)
            subjects.append({"id": subject.id, "description": subject.description, "aligned_to": j,
                             "dropped": scored.dropped, "tags": [vars(t) for t in scored.tags]})
        if failed:
            row["error"] = f"matcher: {len(failed)} value question(s) failed ({', '.join(sorted(set(failed)))})"
            return
        row.update(subjects=subjects, scored=True)

    @staticmethod
    def tallies(rows: list[dict[str, Any]]) -> list[DocTally]:
        """Each scored row's sums (the stored tag scores; no model)."""
        from privasis_bench.spia.matching import SubjectScore

        out = []
        for row in rows:
            if not row.get("scored"):
                continue
            subjects = [SubjectScore(s["id"], tuple(TagScore(**t) for t in s["tags"]), s.get("dropped"))
                        for s in row["subjects"]]
            out.append(tally_document(row["id"], subjects))
        return out

    @staticmethod
    def rescore(rows: list[dict[str, Any]], stored: dict[str, Any], **settings: Any) -> dict[str, Any]:
        """CPR, IPR, per-tag CPR and their intervals from samples rows (no model call)."""
        tallies = SpiaScorer.tallies(rows)
        rates = protection_rates(tallies)
        ci = bootstrap_intervals(tallies, samples=settings["bootstrap_samples"], seed=settings["seed"],
                                 confidence=settings["confidence"])
        return {"scorer": "spia", "cpr": rates["cpr"], "ipr": rates["ipr"],
                "per_tag_cpr": {t: v["cpr"] for t, v in rates["per_tag"].items()},
                "subjects": rates["subjects"], "attributes": rates["attributes"], "score_sum": rates["score_sum"],
                "documents": len(rows), "scored_documents": len(tallies), "ci": ci, "span_recall": span_recall(rows),
                "bootstrap": {"samples": settings["bootstrap_samples"], "seed": settings["seed"],
                              "confidence": settings["confidence"], "unit": "document"}}

    @staticmethod
    def compare(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
        """Both runs' CPR and IPR on their common scored documents, the differences A - B and their paired
        bootstrap intervals and p-values (documents resampled together, in id order)."""
        a = {t.doc_id: t for t in SpiaScorer.tallies(rows_a)}
        b = {t.doc_id: t for t in SpiaScorer.tallies(rows_b)}
        common = sorted(set(a) & set(b))
        ra, rb = protection_rates([a[i] for i in common]), protection_rates([b[i] for i in common])
        boot = {"samples": settings.get("samples") or 0, "seed": settings.get("seed") or 0,
                "confidence": settings.get("confidence") or 0.95}
        paired = paired_intervals([a[i] for i in common], [b[i] for i in common], **boot)
        metrics = {}
        for key in ("cpr", "ipr"):
            diff = None if ra[key] is None or rb[key] is None else ra[key] - rb[key]
            metrics[key] = {"a": ra[key], "b": rb[key], "diff": diff,
                            **(paired[key] if diff is not None else {"ci_low": None, "ci_high": None, "p_value": None})}
        return {"common_records": len(common), "only_a": len(a) - len(common), "only_b": len(b) - len(common),
                "bootstrap": {**boot, "unit": "document"}, "metrics": metrics}
