"""Linkage attack on a hand-built corpus where the correct linkage of every record is known in advance."""

from __future__ import annotations

import pytest

from privasis_bench.protocol.linkage import (
    LinkageError,
    bootstrap_rate,
    build_attacks,
    claim,
    known_attributes,
    linkage_report,
)


def _row(rid: str, output: str | None, keep: dict, targets: dict | None = None, status: str = "judged") -> dict:
    row = {"record_id": rid, "status": status,
           "targets": [{"name": n, "value": v, "tier": "sanitized"} for n, v in (targets or {}).items()],
           "keep": [{"name": n, "value": v, "retained": True} for n, v in keep.items()]}
    if output is not None:
        row["output"] = output
    return row


ROWS = [
    _row("r1", "Marie runs a bakery in Lyon near the river.", {"town": "Lyon", "business": "bakery"}, {"name": "Marie"}),
    _row("r2", "Tomasz repairs bicycles in Gdansk every weekend.", {"town": "Gdansk", "trade": "bicycles"}),
    _row("r3", "The employee attended a meeting.", {"town": "Oslo", "team": "finance"}),  # facts removed: no match
    _row("r4", "Ana teaches piano in Porto.", {"town": "Porto", "subject": "piano"}),  # r4 and r5 tie: not linked
    _row("r5", "Ana teaches piano in Porto.", {"town": "Porto", "subject": "piano"}),
    _row("r6", "Kofi sells maps in Accra.", {"town": "Accra"}, status="unjudged"),  # in the corpus, not attacked
    _row("r7", "Nothing to see.", {"town": None}, {"name": "X"}),  # no known attribute: skipped
    _row("r8", "A person lives somewhere.", {"town": "Gdansk"}),  # its only fact points at r2: wrong link
    _row("r9", None, {"town": "Lyon"}, status="excluded"),  # excluded rows carry no output
]


def test_linkage_on_a_known_corpus():
    report = linkage_report(ROWS, k=3, seed=1, bootstrap_samples=200)
    outcome = {a["record_id"]: (a["top"], a["linked"]) for a in report["attacks"]}
    assert outcome == {"r1": ("r1", True), "r2": ("r2", True), "r3": (None, False), "r4": (None, False),
                       "r5": (None, False), "r8": ("r2", False)}
    assert report["corpus_outputs"] == 8
    assert report["skipped_no_known_attributes"] == ["r7"]
    assert report["attacked_records"] == 6 and report["linked_records"] == 2
    assert report["linkage_rate"] == pytest.approx(100 * 2 / 6)
    assert 0.0 <= report["ci"]["low"] <= report["linkage_rate"] <= report["ci"]["high"] <= 100.0


def test_empty_outputs_link_nothing_and_no_attack_is_undefined():
    empty = [dict(r, output="") if "output" in r else r for r in ROWS]
    report = linkage_report(empty, bootstrap_samples=50)
    assert report["linkage_rate"] == 0.0 and report["corpus_has_terms"] is False
    assert linkage_report([ROWS[6]], bootstrap_samples=50)["linkage_rate"] is None


def test_adversary_knows_k_non_target_attributes_seeded():
    row = _row("r", "text", {f"fact_{i}": f"v{i}" for i in range(6)}, {"secret": "s"})
    extra = {"r": {"secret": "s", "hobby": ["chess", "go"], "empty": None, "fact_0": "other"}}
    assert known_attributes(row, extra["r"]) == {**{f"fact_{i}": f"v{i}" for i in range(6)}, "hobby": ["chess", "go"]}
    first, _ = build_attacks([row], k=3, seed=5, extra=extra)
    again, _ = build_attacks([row], k=3, seed=5, extra=extra)
    assert first == again and len(first[0].claims) == 3
    assert not any(c.startswith("secret") for c in first[0].claims)
    every, _ = build_attacks([row], k=50, seed=5, extra=extra)
    assert "hobby: chess, go" in every[0].claims and len(every[0].claims) == 7
    assert {build_attacks([row], k=2, seed=s)[0][0].claims for s in range(20)} != {first[0].claims[:2]}
    with pytest.raises(LinkageError, match="-k"):
        build_attacks([row], k=0)


def test_claim_and_bootstrap_rate():
    assert claim("date_of_birth", "1961-09-23") == "date of birth: 1961-09-23"
    assert bootstrap_rate([True] * 5, samples=100, seed=0, confidence=0.95) == {"low": 100.0, "high": 100.0}
    assert bootstrap_rate([], samples=100, seed=0, confidence=0.95) == {"low": None, "high": None}
