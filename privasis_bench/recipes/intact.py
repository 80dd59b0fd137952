"""Inference-guided generalization (after INTACT): candidate levels per span, attacks, and the edited text.

A row (see :mod:`steps`) carries ``text`` and, after :func:`plan_units`, ``units`` and ``drops``. A *unit* is one
distinct span of a target to generalize, with the replacements the model proposed for it (``candidates``, most
specific first) and, once decided, its ``choice`` and ``level`` (0-based index into the candidates; the index
``len(candidates)`` means the generic fallback). ``drops`` are the spans of targets to remove.

Selection goes in rounds over the whole batch: in each round every undecided unit puts its current candidate
into the document (decided units put their choice, drop spans are removed) and the attacker is asked to
guess the original wording behind it. A candidate is rejected (the unit moves one level up) when it contains the
original span itself or when one of the attacker's guesses recovers it; the first candidate that survives is kept. A unit whose candidates are
all rejected gets the generic fallback (not attacked: nothing vaguer is left to try).

"Recovers" is the protocol's inference-leak rule (:func:`~privasis_bench.protocol.matching.value_in`, a
case-insensitive substring test) with the original span as the value, after collapsing whitespace and trimming
quotes and punctuation on both sides.
"""

from __future__ import annotations

import re
from typing import Any

from privasis_bench.protocol.matching import value_in
from privasis_bench.recipes.config import RecipeConfig
from privasis_bench.recipes.steps import Ask, Call, alive, list_items, make_request, run_calls

#: The last, fully generic level: what a span becomes when every proposed replacement is traced back.
GENERIC = "[redacted]"
#: Words too common to replace everywhere in the text (a span finder may return a pronoun for a name).
_TOO_COMMON = frozenset("he she him her his hers they them their theirs i me my we us our you your it its".split())
_REMOVED = "\x00"  # marks a dropped span until the text around it is tidied
_CONTEXT_CHARS = 240
#: A span to generalize is a phrase: longer answers of a span finder (whole sentences) are not generalized.
MAX_SPAN_WORDS = 8


def norm(text: str) -> str:
    """Lower-cased, whitespace collapsed, surrounding quotes, brackets and punctuation removed."""
    return " ".join(str(text).lower().split()).strip(" \"'`“”‘’.,;:!?()[]*-")


def recovered(span: str, guess: str) -> bool:
    """True when ``guess`` gives the original ``span`` away (the protocol's substring rule, normalised)."""
    original = norm(span)
    return bool(original) and value_in(original, norm(guess), "any")


def _key(span: str) -> str:
    return " ".join(span.lower().split())


def _usable(span: str) -> bool:
    return len(span.strip()) >= 3 and _key(span) not in _TOO_COMMON


def _target_spans(target: dict[str, Any], limit: int, max_words: int | None = None) -> list[str]:
    """The target's distinct usable spans over all chunks (first seen first), at most ``limit``."""
    seen: dict[str, str] = {}
    for i in sorted(target.get("spans") or {}, key=int):
        for span in target["spans"][i]:
            if max_words is not None and len(span.split()) > max_words:
                continue
            if _usable(span) and _key(span) not in seen:
                seen[_key(span)] = span
    return list(seen.values())[:limit]


def plan_units(rows: list[dict[str, Any]], max_spans: int) -> None:
    """Split each live row's located spans into drop spans and units to generalize (a span claimed by a drop
    target, or by an earlier target, is not generalized again; one longer than :data:`MAX_SPAN_WORDS` words is
    not a phrase and is left alone)."""
    for row in alive(rows):
        drops: dict[str, str] = {}
        for target in row["targets"]:
            if target["kind"] == "drop":
                drops.update({_key(s): s for s in _target_spans(target, max_spans)})
        units: dict[str, dict[str, Any]] = {}
        for target in row["targets"]:
            if target["kind"] == "drop":
                continue
            for span in _target_spans(target, max_spans, MAX_SPAN_WORDS):
                if _key(span) not in drops and _key(span) not in units:
                    units[_key(span)] = {"target": target["label"], "span": span, "candidates": [], "level": 0,
                                         "choice": None, "rejected": []}
        row["drops"] = list(drops.values())
        row["units"] = list(units.values())


def _pattern(spans: list[str]) -> re.Pattern[str] | None:
    """One regex for all spans, longest first, each matched case-insensitively with any whitespace inside and
    never inside a longer word."""
    parts = []
    for span in sorted(spans, key=len, reverse=True):
        words = span.split()
        body = r"\s+".join(re.escape(w) for w in words)
        parts.append((r"(?<!\w)" if words[0][0].isalnum() else "") + body + (r"(?!\w)" if words[-1][-1].isalnum() else ""))
    return re.compile("|".join(parts), re.I) if parts else None


def _tidy(text: str) -> str:
    """Remove drop markers: no space is left before punctuation, at a line's start or end, or twice in a row."""
    text = re.sub(r"[ \t]*\x00+[ \t]*(?=[,.;:!?)\]]|$)", "", text, flags=re.M)
    text = re.sub(r"(^|[(\[])[ \t]*\x00+[ \t]*", r"\1", text, flags=re.M)
    return re.sub(r"[ \t]*\x00+[ \t]*", " ", text)


def edited(row: dict[str, Any]) -> str:
    """The row's text with drop spans removed and every unit's span replaced by its choice, else by its
    candidate at its current level (or the generic fallback when none is left)."""
    replacement: dict[str, str] = {_key(s): _REMOVED for s in row.get("drops", [])}
    for unit in row.get("units", []):
        key = _key(unit["span"])
        if unit["choice"] is not None:
            replacement[key] = unit["choice"]
        else:
            replacement[key] = unit["candidates"][unit["level"]] if unit["level"] < len(unit["candidates"]) else GENERIC
    pattern = _pattern(list(row.get("drops", [])) + [u["span"] for u in row.get("units", [])])
    if pattern is None:
        return row["text"]
    return _tidy(pattern.sub(lambda m: replacement.get(_key(m.group(0)), m.group(0)), row["text"]))


def edited_spans(row: dict[str, Any]) -> list[tuple[int, int]]:
    """The character spans of the row's text that :func:`edited` replaces or removes (for span scorers), sorted
    and disjoint: a removed span also covers the spaces and tabs around it that the tidying removes, so that every
    stretch of the text outside the spans is in the output unchanged."""
    units = {_key(u["span"]) for u in row.get("units", [])}
    removed = {_key(s) for s in row.get("drops", [])} - units
    pattern = _pattern(list(row.get("drops", [])) + [u["span"] for u in row.get("units", [])])
    if pattern is None:
        return []
    text, spans = row["text"], []
    for m in pattern.finditer(text):
        key, start, end = _key(m.group(0)), m.start(), m.end()
        if key not in units | removed:
            continue
        if key in removed:
            while start > 0 and text[start - 1] in " \t":
                start -= 1
            while end < len(text) and text[end] in " \t":
                end += 1
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end), spans[-1][2] and key in removed)
        else:
            spans.append((start, end, key in removed))
    return [(s, e) for s, e, _ in _stripped_ends(text, spans)]


def _stripped_ends(text: str, spans: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
    """Removed spans at either end of the text, with the white space between them and the text, as one span each:
    an output is stripped, so that white space goes with them."""
    i, pos = 0, 0
    while i < len(spans) and spans[i][2] and not text[pos:spans[i][0]].strip():
        pos, i = spans[i][1], i + 1
    if i:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        spans = [(0, pos, True)] + spans[i:]
    j, pos = len(spans), len(text)
    while j > 0 and spans[j - 1][2] and not text[spans[j - 1][1]:pos].strip():
        pos, j = spans[j - 1][0], j - 1
    if j < len(spans):
        while pos > 0 and text[pos - 1].isspace() and (not j or pos > spans[j - 1][1]):
            pos -= 1
        spans = spans[:j] + [(pos, len(text), True)]
    return spans


def _context(text: str, span: str) -> str:
    """About a paragraph of text around the span's first occurrence."""
    m = re.search(re.escape(span), text, re.I)
    if m is None:
        return text[: 2 * _CONTEXT_CHARS]
    start, end = max(0, m.start() - _CONTEXT_CHARS), min(len(text), m.end() + _CONTEXT_CHARS)
    return ("..." if start else "") + text[start:end].strip() + ("..." if end < len(text) else "")


def fits(span: str, candidate: str) -> bool:
    """True for a usable replacement of ``span``: a non-empty phrase not much longer than the span itself."""
    return bool(candidate.strip()) and len(candidate) <= max(2 * len(span), len(span) + 40)


def propose_candidates(rows: list[dict[str, Any]], recipe: RecipeConfig, ask: Ask, count: int) -> None:
    """Ask for ``count`` replacements per unit, most specific first; list items that do not :func:`fits` are
    skipped (an answer with none leaves the unit with only the generic fallback)."""
    calls = []
    for row in alive(rows):
        for unit in row["units"]:

            def apply(answer: str, unit=unit) -> None:
                items = [i for i in dict.fromkeys(list_items(answer)) if fits(unit["span"], i)]
                unit["candidates"] = items[:count]

            request = make_request(recipe, "candidates", target=unit["target"], span=unit["span"],
                                   context=_context(row["text"], unit["span"]), count=count)
            calls.append(Call(row, request, apply))
    run_calls(calls, ask, "candidates")


def _skip_direct(unit: dict[str, Any]) -> None:
    """Reject, without asking anyone, candidates that repeat the original span."""
    while unit["level"] < len(unit["candidates"]) and recovered(unit["span"], unit["candidates"][unit["level"]]):
        unit["rejected"].append({"candidate": unit["candidates"][unit["level"]], "by": "contains the original"})
        unit["level"] += 1


def select_levels(rows: list[dict[str, Any]], recipe: RecipeConfig, attack: Ask, guesses: int) -> None:
    """Keep, per unit, the most specific candidate whose attack does not recover the original span."""
    depth = max((len(u["candidates"]) for r in alive(rows) for u in r["units"]), default=0)
    for round_ in range(depth):
        calls = []
        for row in alive(rows):
            pending = [u for u in row["units"] if u["choice"] is None]
            for unit in pending:
                _skip_direct(unit)
            document = edited(row)
            for unit in pending:
                if unit["level"] >= len(unit["candidates"]):
                    continue
                candidate = unit["candidates"][unit["level"]]

                def apply(answer: str, unit=unit, candidate=candidate) -> None:
                    found = list_items(answer, limit=guesses)
                    hits = [g for g in found if recovered(unit["span"], g)]
                    if hits:
                        unit["rejected"].append({"candidate": candidate, "by": "attack", "guesses": found})
                        unit["level"] += 1
                    else:
                        unit["choice"] = candidate

                request = make_request(recipe, "attack", document=document, candidate=candidate, count=guesses)
                calls.append(Call(row, request, apply))
        run_calls(calls, attack, f"attack level {round_ + 1}")
    for row in alive(rows):
        for unit in row["units"]:
            if unit["choice"] is None:
                _skip_direct(unit)
                unit["choice"] = GENERIC
                unit["level"] = len(unit["candidates"])
