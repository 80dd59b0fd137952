"""Re-identification linkage, after *A False Sense of Privacy*: a measurement beside Table 4, never inside it.

The adversary knows a few true facts about a person that the instruction did not ask to hide (keep attributes,
and other annotated attributes when they are supplied) and searches every sanitized output of the run with BM25
(the ``bm25s`` library) for the record they belong to. A record is *linked* when the single best-scoring output
is its own, with a positive score and no tie for first place. The linkage rate is linked / attacked records, with
a percentile bootstrap CI over records. No model is called here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from privasis_bench.errors import PrivasisError
from privasis_bench.protocol.matching import value_text

DEFAULT_K = 3


class LinkageError(PrivasisError):
    """The linkage attack cannot run on the given inputs (names the argument or file)."""


@dataclass(frozen=True)
class Attack:
    """One adversary query: the record it targets and the claims it knows."""

    record_id: str
    claims: tuple[str, ...]


def claim(name: str, value: Any) -> str:
    """An attribute as a short "name: value" claim (underscores become spaces, list/dict items are joined)."""
    return f"{name.replace('_', ' ')}: {value_text(value)}"


def known_attributes(row: dict[str, Any], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The attributes of a samples row the adversary may know: non-null keep attributes, plus ``extra``
    annotated attributes (name -> value) that are neither targets nor null."""
    targets = {t.get("name") for t in row.get("targets") or []}
    known = {k["name"]: k["value"] for k in row.get("keep") or [] if k.get("value") is not None}
    for name, value in (extra or {}).items():
        if name not in targets and name not in known and value is not None:
            known[name] = value
    return known


def build_attacks(rows: Iterable[dict[str, Any]], *, k: int = DEFAULT_K, seed: int = 0,
                  extra: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[list[Attack], list[str]]:
    """One attack per scored row, knowing ``k`` of its attributes drawn with a seeded generator (all of them
    when it has fewer). Returns the attacks and the ids of scored rows with no known attribute at all."""
    if k < 1:
        raise LinkageError(f"-k must be at least 1, got {k}")
    rng = np.random.default_rng(seed)
    attacks, skipped = [], []
    for row in rows:
        if row.get("status") != "judged":
            continue
        known = known_attributes(row, (extra or {}).get(row["record_id"]))
        if not known:
            skipped.append(row["record_id"])
            continue
        names = sorted(known)
        chosen = sorted(rng.choice(len(names), size=min(k, len(names)), replace=False))
        attacks.append(Attack(row["record_id"], tuple(claim(names[i], known[names[i]]) for i in chosen)))
    return attacks, skipped


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


def retrieve_top(corpus: Mapping[str, str], queries: list[str]) -> list[tuple[str | None, float]]:
    """For each query, the id of the single best BM25 match in ``corpus`` (id -> text) and its score; the id is
    None when nothing scores above zero or two documents tie for first place."""
    import bm25s

    ids = list(corpus)
    docs = _tokenize([corpus[i] or "" for i in ids])
    if not ids or not any(docs):  # nothing to search (e.g. every output is empty)
        return [(None, 0.0) for _ in queries]
    retriever = bm25s.BM25()
    retriever.index(docs, show_progress=False)
    vocab = {t for doc in docs for t in doc}
    tokens = [[t for t in q if t in vocab] for q in _tokenize(queries)]
    out: list[tuple[str | None, float]] = []
    for query in tokens:
        if not query:
            out.append((None, 0.0))
            continue
        scores = retriever.get_scores(query)
        order = np.argsort(-scores, kind="stable")
        best = float(scores[order[0]])
        tied = len(order) > 1 and np.isclose(scores[order[1]], best)
        out.append((None if best <= 0 or tied else ids[order[0]], best))
    return out


def bootstrap_rate(hits: Sequence[float], *, samples: int, seed: int, confidence: float) -> dict[str, float | None]:
    """Percentile bootstrap CI (percent) of the mean of per-record values in [0, 1] (for booleans: the share of
    True), resampling records (seeded)."""
    if not hits or samples <= 0:
        return {"low": None, "high": None}
    values = np.asarray(hits, dtype=float)
    draws = values[np.random.default_rng(seed).integers(0, len(values), size=(samples, len(values)))].mean(axis=1)
    lo, hi = np.percentile(100 * draws, [100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2])
    return {"low": float(lo), "high": float(hi)}


def linkage_report(rows: list[dict[str, Any]], *, k: int = DEFAULT_K, seed: int = 0, bootstrap_samples: int = 1000,
                   confidence: float = 0.95, extra: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The linkage attack on one task's samples rows: rate, CI and every attack's outcome.

    The corpus is every sanitized output of the run (rows with an ``output``); attacks target scored rows.
    The rate is None (undefined) when no record could be attacked.
    """
    corpus = {r["record_id"]: r.get("output") or "" for r in rows if "output" in r}
    attacks, skipped = build_attacks(rows, k=k, seed=seed, extra=extra)
    found = retrieve_top(corpus, [" ".join(a.claims) for a in attacks])
    linked = [top == a.record_id for a, (top, _) in zip(attacks, found)]
    return {
        "measurement": "re-identification linkage (beyond Table 4, not part of the metrics)",
        "retriever": "bm25s (BM25, English stopwords), top-1",
        "k": k,
        "seed": seed,
        "corpus_outputs": len(corpus),
        "corpus_has_terms": any(_tokenize(list(corpus.values()))) if corpus else False,
        "attacked_records": len(attacks),
        # -k is a cap: a record with fewer known attributes is attacked with all of them
        "attacks_knowing_fewer_than_k": sum(len(a.claims) < k for a in attacks),
        "most_known_attributes": max((len(a.claims) for a in attacks), default=0),
        "skipped_no_known_attributes": skipped,
        "linked_records": sum(linked),
        "linkage_rate": 100.0 * sum(linked) / len(linked) if linked else None,
        "ci": bootstrap_rate(linked, samples=bootstrap_samples, seed=seed, confidence=confidence),
        "bootstrap": {"samples": bootstrap_samples, "seed": seed, "confidence": confidence, "unit": "record"},
        "attacks": [{"record_id": a.record_id, "claims": list(a.claims), "top": top, "score": score, "linked": ok}
                    for a, (top, score), ok in zip(attacks, found, linked)],
    }
