"""Checks of one samples row's recorded judge answers that need no model and no task data.

``rescore`` (results/) and ``leaderboard verify`` must hold a samples file to the same rules, and the verifier's
own copies live above ``results/`` in the package order; these are the shared versions, in the protocol layer
both may import:

* :func:`cut_flag_problems`: every ``cut_answers`` list must be a list of distinct names of answers its entry
  records (``guess``, ``original_guess``, ``compare_answer`` for targets; ``guess``, ``inclusion_answer`` for keep
  attributes);
* :func:`answer_cleaning_problems`: every cleaned judge answer must be what the protocol's cleaning makes of the
  raw answer recorded beside it (guesses lower-cased).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from privasis_bench.protocol.answers import clean_answer
from privasis_bench.protocol.verdicts import KEEP_ANSWER_FIELDS, TARGET_ANSWER_FIELDS

#: (cleaned field, raw field, lower-cased?) of the judge answers a samples row records.
TARGET_ANSWERS = (("guess", "guess_raw", True), ("original_guess", "original_guess_raw", True),
                  ("compare_answer", "compare_answer_raw", False))
KEEP_ANSWERS = (("guess", "guess_raw", True), ("inclusion_answer", "inclusion_answer_raw", False))


def _entries(row: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for kind in ("targets", "keep"):
        items = row.get(kind)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping):
                yield kind, item


def _where(row: Mapping[str, Any], kind: str, item: Mapping[str, Any]) -> str:
    return f"record {str(row.get('record_id'))[:80]} {'target' if kind == 'targets' else 'keep'}:{str(item.get('name'))[:60]}"


def cut_flag_problems(rows: Iterable[Mapping[str, Any]], *, require: bool = False) -> list[str]:
    """Every ``cut_answers`` that is not a list of distinct names of answers its entry records (one line each).

    ``require``: an entry that records judge answers without a ``cut_answers`` list is a problem too (what
    ``leaderboard verify`` demands); otherwise such rows are taken as written before the field existed.
    """
    problems = []
    for row in rows:
        for kind, item in _entries(row):
            cut, fields = item.get("cut_answers"), TARGET_ANSWER_FIELDS if kind == "targets" else KEEP_ANSWER_FIELDS
            where = _where(row, kind, item)
            if not isinstance(cut, list):
                if require and row.get("status") != "excluded" and any(item.get(name) is not None for name in fields):
                    problems.append(f"{where}: records judge answers but no cut_answers (every row this harness "
                                    "writes lists the answers cut at their budget, [] when none)")
                elif not require and cut is not None:
                    problems.append(f"{where}: cut_answers must be a list of answer names, not {type(cut).__name__}")
                continue
            if len(set(map(str, cut))) != len(cut):
                problems.append(f"{where}: cut_answers names an answer twice")
            bad = [str(name)[:40] for name in cut if name not in fields or item.get(name) is None]
            if bad:
                problems.append(f"{where}: cut_answers names {', '.join(bad)}, not an answer this entry records")
    return problems


def answer_cleaning_problems(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every cleaned judge answer that is not the protocol's cleaning of its recorded raw answer (one line each)."""
    problems = []
    for row in rows:
        for kind, item in _entries(row):
            for cleaned_key, raw_key, lower in TARGET_ANSWERS if kind == "targets" else KEEP_ANSWERS:
                cleaned, raw = item.get(cleaned_key), item.get(raw_key)
                if cleaned is None:
                    continue
                if not isinstance(cleaned, str):
                    problems.append(f"{_where(row, kind, item)}: {cleaned_key} must be text or null, not "
                                    f"{type(cleaned).__name__}")
                    continue
                expected = clean_answer(raw if isinstance(raw, str) else cleaned)
                expected = expected.lower() if lower else expected
                if cleaned != expected:
                    problems.append(f"{_where(row, kind, item)}: {cleaned_key} is {_short(cleaned)!r} but cleaning "
                                    f"{'the recorded ' + raw_key if isinstance(raw, str) else 'it'} gives "
                                    f"{_short(expected)!r}")
    return problems


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
