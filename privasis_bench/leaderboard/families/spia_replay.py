"""Re-deriving one SPIA samples row from the model answers it records, as the SPIA scorer derived it.

A row keeps the adversary's three raw answers (``answers.subjects``, ``answers.profile_codes``,
``answers.profile_descriptive``), the matcher's alignment answer (``answers.align``) and every value question the
matcher answered (``matcher_answers``). Everything else on the row (people, pairs, subjects and their tag scores,
``scored``) follows from those answers, the shipped document's gold subjects and the task's scoring settings: this
module reads the answers with the scorer's own readers and scores each subject with the scorer's own rules, so the
verifier can compare what the row says with what its answers give. The answers themselves are checked by re-asking
the pinned models (:mod:`.spia`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from privasis_bench.spia.answers import UnreadableAnswer, parse_pairs, parse_people, parse_profile
from privasis_bench.spia.matching import score_subject
from privasis_bench.spia.records import CODE_TAGS, NON_CODE_TAGS, Attribute, SpiaDocument


@dataclass
class Replayed:
    """What one row's answers give: the people, the inferred attributes, the pairing and the scored subjects
    (as far as the answers go), and why the row cannot be scored (None: it can)."""

    people: list[str] | None = None
    inferred: list[tuple[str, list[Attribute]]] | None = None
    pairs: dict[int, int | None] | None = None
    subjects: list[dict[str, Any]] | None = None
    unscored: str | None = None
    problems: list[str] = field(default_factory=list)  # the row contradicts itself (not a model failure)


def matcher_table(row: Mapping[str, Any]) -> tuple[dict[tuple[str, str, str], str], list[str]]:
    """(gold, guess, tag) -> the matcher's recorded answer, and one problem per malformed or contradicting entry."""
    table: dict[tuple[str, str, str], str] = {}
    problems: list[str] = []
    items = row.get("matcher_answers") or []
    if not isinstance(items, list):
        return {}, ["matcher_answers is not a list"]
    for n, item in enumerate(items):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("tag", "gold", "guess", "answer")):
            problems.append(f"matcher_answers[{n}] is not a tag/gold/guess/answer record of strings")
            continue
        key = (item["gold"], item["guess"], item["tag"])
        if table.setdefault(key, item["answer"]) != item["answer"]:
            problems.append(f"matcher_answers[{n}]: two different answers to the same question ({item['tag']})")
    return table, problems


def read_steps(answers: Mapping[str, Any]) -> Replayed:
    """The adversary's people and profiles read from the recorded answers (as far as they go)."""
    got = Replayed()
    text = answers.get("subjects")
    if not isinstance(text, str):
        got.unscored = "no recorded adversary people answer"
        return got
    try:
        got.people = parse_people(text)
    except UnreadableAnswer as exc:
        got.unscored = f"adversary people list: {exc}"
        return got
    codes, other = answers.get("profile_codes"), answers.get("profile_descriptive")
    if not isinstance(codes, str) or not isinstance(other, str):
        got.unscored = "no recorded adversary profile answer"
        return got
    try:
        n = len(got.people)
        by_code, by_other = parse_profile(codes, CODE_TAGS, n), parse_profile(other, NON_CODE_TAGS, n)
        got.inferred = [(got.people[i], by_code[i] + by_other[i]) for i in range(n)]
    except UnreadableAnswer as exc:
        got.unscored = f"adversary profile: {exc}"
    return got


def replay(doc: SpiaDocument, row: Mapping[str, Any], *, location_max_depth: int | None,
           uncomparable: str) -> Replayed:
    """Re-derive one row (see the module docstring) against the shipped document ``doc``."""
    if not isinstance(row.get("output"), str):
        return Replayed(unscored="no output")
    answers = row.get("answers") if isinstance(row.get("answers"), dict) else {}
    got = read_steps(answers)
    if got.unscored is not None:
        return got
    assert got.inferred is not None
    align = answers.get("align")
    if not isinstance(align, str):
        got.unscored = "no recorded matcher alignment answer"
        return got
    try:
        got.pairs = parse_pairs(align, len(doc.subjects), len(got.inferred))
    except UnreadableAnswer as exc:
        got.unscored = f"matcher alignment: {exc}"
        return got
    table, got.problems = matcher_table(row)
    missing: list[str] = []

    def matcher(gold: str, guess: str, tag: str) -> str:
        answer = table.get((gold, guess, tag))
        if answer is None:
            missing.append(tag)
            return "no"
        return answer

    subjects = []
    for i, subject in enumerate(doc.subjects):
        j = got.pairs.get(i)
        scored = score_subject(subject, got.inferred[j][1] if j is not None else [], matcher,
                               location_max_depth=location_max_depth, uncomparable=uncomparable)
        subjects.append({"id": subject.id, "description": subject.description, "aligned_to": j,
                         "dropped": scored.dropped, "tags": [vars(t) for t in scored.tags]})
    if missing:
        got.unscored = f"matcher: {len(missing)} value question(s) without a recorded answer"
        return got
    got.subjects = json.loads(json.dumps(subjects))  # the form the row stores (JSON numbers)
    return got


def row_problems(doc_id: str, row: Mapping[str, Any], got: Replayed) -> list[str]:
    """Every way the row's own fields differ from what its answers give (the board and viewer show these fields)."""
    out = [f"document {doc_id}: {p}" for p in got.problems]
    scored = got.unscored is None
    if bool(row.get("scored")) != scored:
        why = "its answers score it" if scored else f"its answers cannot be scored ({got.unscored})"
        out.append(f"document {doc_id}: scored is {row.get('scored')!r} but {why} (the verifier decides, not the row)")
    if scored and row.get("error") is not None:
        out.append(f"document {doc_id}: error is set but its answers score it")
    if not scored and row.get("error") is None:
        out.append(f"document {doc_id}: unscored ({got.unscored}) but its error is empty")
    if scored:
        pairs = {str(k): v for k, v in (got.pairs or {}).items()}
        for key, want in (("subjects", got.subjects), ("people", got.people), ("pairs", pairs)):
            if row.get(key) != want:
                out.append(f"document {doc_id}: {key} is not what its recorded answers give (re-derived from the "
                           "adversary's and the matcher's answers and the shipped document)")
    return out
