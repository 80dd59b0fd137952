"""``datafog:`` — DataFog's regex engine as a sanitizer: ``datafog.engine.scan(engine="regex")`` then ``redact``.

Rule-based and instruction-blind: e-mail addresses, phone numbers, SSNs, credit cards, IP addresses, dates and ZIP
codes (German identifiers with ``locale=de``); names, places and organisations are kept. DataFog's spaCy and GLiNER
engines are not offered: they load models from a hub at run time.

Arguments (``datafog:,k=v``): ``entities`` (``|``-separated DataFog entity types, default all of the locale),
``strategy`` (DataFog's: ``token`` ``[EMAIL_1]``, ``mask`` ``****``, ``hash`` ``[EMAIL_<sha256 prefix>]``,
``pseudonymize`` ``[EMAIL_PSEUDO_1]``), ``locale`` (``us``, default, or ``de``). DataFog's usage telemetry is off unless
``DATAFOG_TELEMETRY=1`` is set (its default); nothing here turns it on.
"""

from __future__ import annotations

from typing import Any

from privasis_bench.adapters.deid import DeidAdapter, choice, choices, paired, require_packages, version_of

INSTALL = "pip install 'privasis-bench[datafog]'"
STRATEGIES = ("token", "mask", "hash", "pseudonymize")
LOCALES = ("us", "de")


class DataFogAdapter(DeidAdapter):
    """DataFog's regex scan and redaction over each record text; reports the spans it redacted and what it wrote."""

    provider = "datafog"
    extra = "datafog"
    description = ("DataFog (regex engine): instruction-blind and rule-based; regular expressions remove contact "
                   "details, card and social security numbers, IP addresses, dates and ZIP codes, and keep names.")
    accepted_args = ("entities", "strategy", "locale")

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        require_packages("datafog", ("datafog",), INSTALL)
        from datafog.core import get_supported_entities

        self.locale = choice("datafog", "locale", args.get("locale", "us"), LOCALES)
        self._locales = None if self.locale == "us" else [self.locale]
        supported = get_supported_entities(self._locales)
        self.entities = choices("datafog", "entities", args["entities"], supported) if args.get("entities") is not None else None
        self.strategy = choice("datafog", "strategy", args.get("strategy", "token"), STRATEGIES)

    def describe(self) -> dict[str, Any]:
        """DataFog's version and the engine, entity types, strategy and locale used."""
        return {"tool": "datafog", "version": version_of("datafog"), "engine": "regex", "entities": self.entities or "all",
                "strategy": self.strategy, "locale": self.locale}

    def deidentify(self, text: str) -> tuple[str, list[tuple[int, int]], list[str]]:
        """DataFog's redacted text, the spans it redacted (after its own overlap resolution) and what it wrote."""
        from datafog.engine import redact, scan

        found = scan(text, engine="regex", entity_types=self.entities, locales=self._locales)
        result = redact(text, found.entities, strategy=self.strategy)
        spans = [(e.start, e.end) for e in result.entities]
        out = result.redacted_text
        written: list[str] = []
        shift = 0
        for start, end in sorted(spans):
            at = start + shift
            if self.strategy == "mask":
                size = max(end - start, 1)
            else:  # "[TYPE_...]": up to the first closing bracket DataFog wrote
                size = out.index("]", at) + 1 - at
            written.append(out[at:at + size])
            shift += size - (end - start)
        return (out, *paired(text, sorted(spans), written, out))
