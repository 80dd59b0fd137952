"""Reading the adversary's and the aligner's answers: people lists, profiles and pairings.

Every reader either returns what it read or raises :class:`UnreadableAnswer` naming what is wrong; the scorer
records an unreadable answer as a failed call for that document (never as "nothing inferred").
"""

from __future__ import annotations

import json
import re
from typing import Any

from privasis_bench.spia.records import TAGS, Attribute


class UnreadableAnswer(ValueError):
    """An answer that does not have the asked-for form."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _json_object(answer: str) -> dict[str, Any]:
    """The first JSON object in an answer (code fences and text around it are allowed)."""
    text = answer.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    start = text.find("{")
    if start < 0:
        raise UnreadableAnswer("no JSON object in the answer")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise UnreadableAnswer(f"the JSON object does not parse ({exc.msg})") from None
    if not isinstance(value, dict):
        raise UnreadableAnswer("the answer's JSON is not an object")
    return value


def parse_people(answer: str) -> list[str]:
    """The people the subject analysis lists (``- description | role`` lines), checked against its count line."""
    people = [m.group(1).strip() for m in re.finditer(r"^\s*[-*]\s+(.+?)\s*$", answer, re.M)]
    people = [p for p in people if p and not p.lower().startswith(("not counted", "none"))]
    count = re.search(r"number of (?:people|subjects)\s*:\s*\**\s*(\d+)", answer, re.I)
    if count is None:
        raise UnreadableAnswer("no 'Number of people: N' line")
    if int(count.group(1)) != len(people):
        raise UnreadableAnswer(f"the count says {count.group(1)} people, the list has {len(people)}")
    return people


def parse_profile(answer: str, tags: tuple[str, ...], people: int) -> dict[int, list[Attribute]]:
    """Each listed person's inferred values of ``tags`` (unknown tags and out-of-range people are refused)."""
    data = _json_object(answer)
    rows = data.get("people")
    if not isinstance(rows, list):
        raise UnreadableAnswer("no 'people' list")
    out: dict[int, list[Attribute]] = {i: [] for i in range(people)}
    for n, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("subject_id"), int) or isinstance(row.get("subject_id"), bool):
            raise UnreadableAnswer(f"people[{n}]: no integer subject_id")
        sid = row["subject_id"]
        if sid not in out:
            raise UnreadableAnswer(f"people[{n}]: subject_id {sid} is not one of the {people} people listed")
        for m, item in enumerate(row.get("attributes") or []):
            if not isinstance(item, dict):
                raise UnreadableAnswer(f"people[{n}].attributes[{m}]: not an object")
            tag, keyword, certainty = item.get("tag"), item.get("keyword", ""), item.get("certainty", 0)
            if tag not in tags:
                raise UnreadableAnswer(f"people[{n}].attributes[{m}].tag: {str(tag)[:40]!r} is not one of the asked tags")
            if not isinstance(keyword, str):
                keyword = "" if keyword is None else str(keyword)
            if isinstance(certainty, str) and certainty.strip().isdigit():
                certainty = int(certainty.strip())
            if not isinstance(certainty, int) or isinstance(certainty, bool) or not 0 <= certainty <= 5:
                raise UnreadableAnswer(f"people[{n}].attributes[{m}].certainty: {certainty!r} is not 0-5")
            out[sid].append(Attribute(tag=tag, keyword=keyword, certainty=certainty, hardness=0))
    return out


def parse_pairs(answer: str, reference: int, inferred: int) -> dict[int, int | None]:
    """Reference person -> inferred person (None: unpaired); a person paired twice is refused."""
    data = _json_object(answer)
    pairs = data.get("pairs")
    if not isinstance(pairs, list):
        raise UnreadableAnswer("no 'pairs' list")
    out: dict[int, int | None] = {i: None for i in range(reference)}
    used: set[int] = set()
    for n, pair in enumerate(pairs):
        ref, inf = (pair.get("reference"), pair.get("inferred")) if isinstance(pair, dict) else (None, None)
        if not isinstance(ref, int) or isinstance(ref, bool) or ref not in out:
            raise UnreadableAnswer(f"pairs[{n}].reference: {ref!r} is not a reference person")
        if inf is None:
            continue
        if not isinstance(inf, int) or isinstance(inf, bool) or not 0 <= inf < inferred:
            raise UnreadableAnswer(f"pairs[{n}].inferred: {inf!r} is not an inferred person")
        if inf in used or out[ref] is not None:
            raise UnreadableAnswer(f"pairs[{n}]: a person is paired twice")
        used.add(inf)
        out[ref] = inf
    return out


def all_tags() -> tuple[str, ...]:
    """Every tag, in the data's order (what the two profiling calls cover together)."""
    return TAGS
