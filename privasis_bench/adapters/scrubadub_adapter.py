"""``scrubadub:`` — the scrubadub library as a sanitizer: its detectors find "filth", its post-processors replace it.

Rule-based and instruction-blind: regular expressions (e-mail, URL, credentials, credit cards, national numbers,
postcodes, ...) and phone numbers through Google's libphonenumber; names only through optional detectors.

Arguments (``scrubadub:,k=v``): ``detectors`` (``|``-separated names from scrubadub's catalogue, default scrubadub's
own default set; ``spacy`` and ``spacy_name`` need the ``scrubadub_spacy`` package, ``text_blob_name`` TextBlob's
corpora), ``replace`` (``type``: ``{{EMAIL}}``, scrubadub's default; ``type_count``: ``{{EMAIL-0}}``, one number per
distinct value; ``hash``: ``{{EMAIL-<hash>}}``; ``remove``: deleted), ``hash_salt`` (``hash``, default
``privasis-bench``, so runs repeat), ``locale`` (default ``en_US``: which phone, postcode and national-number
formats apply), ``spacy_model`` (for the spaCy detectors).
"""

from __future__ import annotations

from typing import Any

from privasis_bench.adapters.deid import DeidAdapter, choice, choices, require_packages, splice, version_of
from privasis_bench.data.spacy_pipelines import check_spacy_pipeline
from privasis_bench.errors import ModelSpecError

INSTALL = "pip install 'privasis-bench[scrubadub]'"
REPLACE = ("type", "type_count", "hash", "remove")
#: Catalogue detectors that need arguments of their own (evaluation helpers), not offered as model arguments.
NOT_OFFERED = ("tagged", "user_supplied")
SPACY_DETECTORS = ("spacy", "spacy_name")


def catalogue_detectors() -> list[str]:
    """Every detector scrubadub registers that a model spec can name (plus the scrubadub_spacy ones)."""
    from scrubadub.detectors.catalogue import detector_catalogue

    names = [n for n in detector_catalogue.get_all() if n not in NOT_OFFERED]
    return sorted(set(names) | set(SPACY_DETECTORS))


class ScrubadubAdapter(DeidAdapter):
    """scrubadub's Scrubber over each record text; reports each filth's span and the text written in its place."""

    provider = "scrubadub"
    extra = "scrubadub"
    description = ("scrubadub: instruction-blind and rule-based; regular expressions and phone-number parsing remove "
                   "contact details and identifiers, names only with an optional NER detector.")
    accepted_args = ("detectors", "replace", "hash_salt", "locale", "spacy_model")

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        require_packages("scrubadub", ("scrubadub",), INSTALL)
        import scrubadub

        self.detectors: list[str] | None = None
        if args.get("detectors") is not None:
            self.detectors = choices("scrubadub", "detectors", args["detectors"], catalogue_detectors())
        self.replace = choice("scrubadub", "replace", args.get("replace", "type"), REPLACE)
        self.hash_salt = str(args.get("hash_salt", "privasis-bench"))
        self.locale = str(args.get("locale", "en_US"))
        self.spacy_model = str(args.get("spacy_model") or "") or None
        if self.spacy_model:
            check_spacy_pipeline(self.spacy_model, "scrubadub: spacy_model")
        if any(d in SPACY_DETECTORS for d in self.detectors or ()):
            require_packages("scrubadub", ("scrubadub_spacy",), "pip install scrubadub-spacy (it needs spacy-transformers, "
                             "which pins transformers<4.53.3)")
            import scrubadub_spacy  # noqa: F401 - registers the spaCy detectors
        if "text_blob_name" in (self.detectors or ()):
            self._check_textblob()
        try:
            self._scrubber = scrubadub.Scrubber(detector_list=self._detector_list(), locale=self.locale,
                                                post_processor_list=self._post_processors())
        except ValueError as exc:
            if "locale" in str(exc).lower():
                raise ModelSpecError(f"scrubadub: locale must be a language_REGION code Python's locale module knows "
                                     f"(en_US, en_GB, de_DE, fr_FR, ...), not {self.locale!r}") from None
            raise ModelSpecError(f"scrubadub: {exc}") from None

    @staticmethod
    def _check_textblob() -> None:
        import nltk

        try:
            nltk.data.find("tokenizers/punkt_tab")
        except LookupError:
            raise ModelSpecError("scrubadub: detector text_blob_name needs TextBlob's corpora, which are not installed: "
                                 "run `python -m textblob.download_corpora`") from None

    def _detector_list(self) -> list[Any] | None:
        if self.detectors is None:
            return None  # scrubadub's defaults
        out: list[Any] = []
        for name in self.detectors:
            if name in SPACY_DETECTORS and self.spacy_model:
                from scrubadub.detectors.catalogue import detector_catalogue

                out.append(detector_catalogue.get(name)(model=self.spacy_model, locale=self.locale))
            else:
                out.append(name)
        return out

    def _post_processors(self) -> list[Any]:
        from scrubadub.post_processors import FilthRemover, FilthReplacer

        if self.replace == "type":
            return []  # each filth's own replace_with(): {{TYPE}}
        if self.replace == "remove":
            return [FilthRemover()]
        if self.replace == "type_count":
            return [FilthReplacer(include_count=True)]
        return [FilthReplacer(include_hash=True, hash_salt=self.hash_salt)]

    def describe(self) -> dict[str, Any]:
        """scrubadub's version, the detectors it ran and how it replaced what they found."""
        out: dict[str, Any] = {"tool": "scrubadub", "version": version_of("scrubadub"),
                               "detectors": sorted(getattr(self._scrubber, "_detectors", {})) or self.detectors, "replace": self.replace,
                               "locale": self.locale, "phonenumbers_version": version_of("phonenumbers")}
        if self.replace == "hash":
            out["hash_salt"] = self.hash_salt
        if any(d in SPACY_DETECTORS for d in self.detectors or ()):
            out.update(scrubadub_spacy_version=version_of("scrubadub-spacy"), spacy_model=self.spacy_model)
        return out

    def deidentify(self, text: str) -> tuple[str, list[tuple[int, int]], list[str]]:
        """What scrubadub's ``clean`` writes, with each filth's span and replacement (post-processors applied)."""
        filths = list(self._scrubber.iter_filth(text, run_post_processors=True))
        edits = [(f.beg, f.end, f.replacement_string if f.replacement_string is not None else f.replace_with())
                 for f in filths]
        return splice(text, edits)
