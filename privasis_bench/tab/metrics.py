"""TAB's evaluation measures, as its official ``evaluation.py`` counts them (our own code).

Per annotator, mentions sharing an ``entity_id`` form an entity. An entity *needs masking* when any of its mentions
is DIRECT or QUASI; it counts as a *direct* identifier when its first mention is DIRECT (the official script takes
the entity's identifier kind and type from the first mention it reads). A mention is *masked* when every character
of it is covered by the system's spans, apart from the characters :mod:`privasis_bench.tab.tokens` ignores.

* token-level recall: over every mention of every entity needing masking (NO_MASK mentions of such an entity
  included, as the script does), split into ``\\w+`` tokens; the share of tokens masked. Also per entity type.
* mention-level recall: the same over whole mentions.
* entity-level recall (direct, quasi, all): the share of entities needing masking (of that kind) whose mentions
  that need masking are all masked.
* uniform precision (token- and mention-level): each system unit (a ``\\w+`` token inside a masked span, or a whole
  masked span) counts once per annotator of the document; it is a true positive for each annotator one of whose
  masked mentions contains it whole. Annotators of a document are those with at least one mention.
* token F1: the harmonic mean of token precision and token recall.

Every measure is a micro-average: numerators and denominators are summed over documents and annotators. This
module keeps them per document (:class:`DocTally`), so that :mod:`privasis_bench.tab.bootstrap` can resample
documents; :func:`pooled` turns summed tallies into the measures.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from privasis_bench.tab.records import Mention, TabDocument
from privasis_bench.tab.tokens import IgnoreMap

_WORD = re.compile(r"\w+")
#: Ratio measures and the tally keys (numerator, denominator) they are computed from.
RATIOS: dict[str, tuple[str, str]] = {
    "token_recall": ("tok_masked", "tok_total"),
    "mention_recall": ("men_masked", "men_total"),
    "recall_direct_entities": ("dir_masked", "dir_total"),
    "recall_quasi_entities": ("qua_masked", "qua_total"),
    "recall_all_entities": ("ent_masked", "ent_total"),
    "token_precision": ("tok_tp", "tok_units"),
    "mention_precision": ("men_tp", "men_units"),
}

#: The recall measures (None when there is nothing to count).
RECALLS = frozenset({"token_recall", "mention_recall", "recall_direct_entities", "recall_quasi_entities",
                     "recall_all_entities"})


@dataclass
class Entity:
    """One annotator's entity: its mentions in file order and which of them need masking."""

    annotator: str
    entity_id: str
    entity_type: str
    is_direct: bool
    mentions: list[Mention] = field(default_factory=list)

    @property
    def needs_masking(self) -> bool:
        return any(m.needs_masking for m in self.mentions)


def entities(doc: TabDocument) -> list[Entity]:
    """Every annotator's entities of ``doc`` (kind and type from each entity's first mention)."""
    out: list[Entity] = []
    for annotator, mentions in doc.annotations.items():
        by_id: dict[str, Entity] = {}
        for m in mentions:
            if m.entity_id not in by_id:
                by_id[m.entity_id] = Entity(annotator, m.entity_id, m.entity_type, m.identifier_type == "DIRECT")
            by_id[m.entity_id].mentions.append(m)
        out.extend(by_id.values())
    return out


def coverage(text: str, spans: Iterable[Sequence[int]]) -> bytearray:
    """One byte per character: 1 where a system span masks it (spans are clipped to the text)."""
    covered = bytearray(len(text))
    for start, end in spans:
        start, end = max(0, int(start)), min(len(text), int(end))
        if end > start:
            covered[start:end] = b"\x01" * (end - start)
    return covered


def is_span_masked(covered: bytearray, ignored: bytearray, start: int, end: int) -> bool:
    """True when every character of [start, end) is masked or ignorable."""
    return all(covered[i] or ignored[i] for i in range(start, end))


def word_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The ``\\w+`` tokens of text[start:end], in document offsets."""
    return [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]


@dataclass
class DocTally:
    """One document's numerators and denominators (summed over its annotators), plus per-type token counts."""

    doc_id: str
    counts: Counter = field(default_factory=Counter)
    by_type: dict[str, list[int]] = field(default_factory=dict)  # entity type -> [masked tokens, tokens]
    missed: list[dict] = field(default_factory=list)  # mentions needing masking left (partly) unmasked

    def add(self, other: "DocTally") -> None:
        """Sum ``other`` into this tally (missed mentions are not carried)."""
        self.counts.update(other.counts)
        for k, (a, b) in other.by_type.items():
            cur = self.by_type.setdefault(k, [0, 0])
            cur[0] += a
            cur[1] += b


def tally_document(doc: TabDocument, spans: Sequence[Sequence[int]], ignore: IgnoreMap) -> DocTally:
    """Count every measure's numerator and denominator for one document and the system's spans on it."""
    text = doc.text
    covered, ignored = coverage(text, spans), ignore.flags(text)
    tally = DocTally(doc.doc_id)
    c = tally.counts
    masked_mentions: list[tuple[int, int, str]] = []
    for ent in entities(doc):
        if not ent.needs_masking:
            continue
        kind = "dir" if ent.is_direct else "qua"
        all_masked = True
        for m in ent.mentions:
            s, e = m.start_offset, m.end_offset
            ok = is_span_masked(covered, ignored, s, e)
            c["men_masked"] += ok
            c["men_total"] += 1
            if m.needs_masking:
                masked_mentions.append((s, e, ent.annotator))
                if not ok:
                    all_masked = False
                    tally.missed.append({"annotator": ent.annotator, "entity_id": ent.entity_id, "start": s, "end": e,
                                         "text": text[s:e], "identifier_type": m.identifier_type,
                                         "entity_type": ent.entity_type, "partial": any(covered[s:e])})
            per_type = tally.by_type.setdefault(ent.entity_type, [0, 0])
            for ts, te in word_spans(text, s, e):
                hit = is_span_masked(covered, ignored, ts, te)
                c["tok_masked"] += hit
                c["tok_total"] += 1
                per_type[0] += hit
                per_type[1] += 1
        c[f"{kind}_masked"] += all_masked
        c[f"{kind}_total"] += 1
        c["ent_masked"] += all_masked
        c["ent_total"] += 1
    for unit_kind, token_level in (("tok", True), ("men", False)):
        units, n_annotators = precision_units(doc, spans, token_level=token_level, masked=masked_mentions)
        c[f"{unit_kind}_tp"] += sum(n for _, _, n in units)
        c[f"{unit_kind}_units"] += n_annotators * len(units)
    return tally


def precision_units(doc: TabDocument, spans: Sequence[Sequence[int]], *, token_level: bool,
                    masked: list[tuple[int, int, str]] | None = None) -> tuple[list[tuple[int, int, int]], int]:
    """The system's precision units (``\\w+`` tokens of its spans, or the spans) as (start, end, number of annotators
    who masked it whole), and the number of annotators of the document (those with at least one mention)."""
    if masked is None:
        masked = [(m.start_offset, m.end_offset, e.annotator) for e in entities(doc) if e.needs_masking
                  for m in e.mentions if m.needs_masking]
    raw = [(int(s), int(e)) for s, e in spans]
    units = [t for s, e in raw for t in word_spans(doc.text, s, e)] if token_level else raw
    # an empty or reversed unit overlaps no mention, so no annotator matches it (the official interval query)
    counted = [(us, ue, len({a for s, e, a in masked if s <= us and e >= ue}) if ue > us else 0) for us, ue in units]
    return counted, len([a for a, ms in doc.annotations.items() if ms])


def ratio(num: float, den: float) -> float:
    """num / den, 0 when there is nothing to count (the official script's convention)."""
    return num / den if den else 0.0


def pooled(tally: DocTally, *, official: bool = False) -> dict[str, object]:
    """The measures from summed tallies (unrounded), with token F1 and token recall per entity type.

    A recall with nothing to count (no mention needing masking) is None: a recall over nothing is not 0, so it is
    left out rather than scored; ``official=True`` gives 0 there, which is what TAB's script prints. A precision over
    nothing (the system masked nothing) is 0, as in the official script."""
    def share(name: str, num: float, den: float) -> float | None:
        return num / den if den else (None if name in RECALLS and not official else 0.0)

    out: dict[str, object] = {name: share(name, tally.counts[n], tally.counts[d]) for name, (n, d) in RATIOS.items()}
    p, r = out["token_precision"], out["token_recall"]
    out["token_f1"] = (None if p is None or r is None else  # type: ignore[operator]
                       2 * p * r / (p + r) if p + r else 0.0)  # type: ignore[operator]
    out["token_recall_by_type"] = {k: ratio(a, b) for k, (a, b) in sorted(tally.by_type.items())}
    return out


def empty_measures(values: dict[str, object]) -> list[str]:
    """The measures of ``values`` that had nothing to count (None)."""
    return [k for k, v in values.items() if v is None]


def total(tallies: Iterable[DocTally]) -> DocTally:
    """The sum of several documents' tallies."""
    acc = DocTally("*")
    for t in tallies:
        acc.add(t)
    return acc
