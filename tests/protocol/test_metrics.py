"""Protocol §5 metrics, denominators, breakdowns and bootstrap CIs."""

from __future__ import annotations

import math

import pytest

from privasis_bench.protocol.metrics import (
    HEADLINE_METRICS,
    bootstrap_ci,
    compute_metrics,
    failures_by_category,
    headline_metrics,
    leak_breakdown,
    paired_bootstrap,
    scored,
    top_failed_attributes,
)
from privasis_bench.protocol.verdicts import KeepVerdict, RecordVerdict, TargetVerdict


def tv(name, tier):
    return TargetVerdict(name=name, kind="drop", group=None, value=None if tier == "null" else "v", tier=tier)


def kv(name, retained, via="judge"):
    return KeepVerdict(name=name, value=None if via == "null" else "v", retained=retained, via=via)


def rv(rid, targets, keep, category="A"):
    return RecordVerdict(record_id=rid, category=category, record_type="t", output_failed=False, targets=targets, keep=keep)


def test_null_targets_count_in_attribute_denominator_only():
    r = rv("1", [tv("a", "sanitized"), tv("b", "null")], [kv("k", True)])
    m = headline_metrics([r])
    assert m["sanitization_attribute"] == pytest.approx(50.0)  # null counts in the denominator
    assert m["sanitization_attribute_per_record"] == pytest.approx(100.0)  # not in the record rate
    assert m["sanitization_record"] == pytest.approx(100.0)
    assert m["full_successful_record"] == pytest.approx(100.0)


def test_all_null_record_is_not_complete_and_skipped_in_per_record_mean():
    records = [
        rv("1", [tv("a", "null")], [kv("k", True)]),
        rv("2", [tv("a", "sanitized"), tv("b", "direct")], [kv("k", True), kv("l", False)]),
    ]
    m = headline_metrics(records)
    assert m["sanitization_attribute"] == pytest.approx(100 * 1 / 3)
    assert m["sanitization_attribute_per_record"] == pytest.approx(50.0)  # record 1 undefined: skipped
    assert m["sanitization_record"] == pytest.approx(0.0)  # neither record is complete
    assert m["retention_attribute"] == pytest.approx(100 * 2 / 3)
    assert m["retention_attribute_per_record"] == pytest.approx(75.0)
    assert m["retention_record"] == pytest.approx(50.0)
    assert m["full_successful_record"] == pytest.approx(0.0)


def test_null_keep_counts_in_retention_attribute_denominator():
    m = headline_metrics([rv("1", [tv("a", "sanitized")], [kv("k", True), kv("n", None, via="null")])])
    assert m["retention_attribute"] == pytest.approx(50.0)
    assert m["retention_attribute_per_record"] == pytest.approx(100.0)
    assert m["retention_record"] == pytest.approx(100.0)


@pytest.mark.parametrize(
    "targets, keep, full",
    [
        (["sanitized", "sanitized"], [True], True),
        (["sanitized", "proximity"], [True], False),
        (["sanitized"], [True, False], False),
        (["null"], [True], False),
    ],
)
def test_full_success(targets, keep, full):
    r = rv("1", [tv(f"t{i}", t) for i, t in enumerate(targets)], [kv(f"k{i}", k) for i, k in enumerate(keep)])
    assert headline_metrics([r])["full_successful_record"] == (100.0 if full else 0.0)


def test_scored_drops_unjudged_but_keeps_unparseable_as_failures():
    """Issue 50.3: an unparseable record stays in every denominator; its unreadable answers are failures."""
    ok = rv("1", [tv("a", "sanitized")], [kv("k", True)])
    bad = rv("2", [tv("a", "unjudged")], [kv("k", True)])
    odd = rv("3", [tv("a", "sanitized")], [kv("k", None, via="unparseable")])
    odd_target = rv("4", [tv("a", "unparseable")], [kv("k", True)])
    kept = scored([ok, bad, odd, odd_target])
    assert [v.record_id for v in kept] == ["1", "3", "4"]
    m = headline_metrics(kept)
    assert m["retention_attribute"] == pytest.approx(200 / 3) and m["sanitization_attribute"] == pytest.approx(200 / 3)
    assert m["full_successful_record"] == pytest.approx(100 / 3)


def test_empty_set_is_undefined_not_zero():
    m = headline_metrics([])
    assert all(v is None for v in m.values())


def test_leak_breakdown_ratios_over_failed_targets():
    records = [rv("1", [tv("a", "direct"), tv("b", "direct"), tv("c", "inference"), tv("d", "proximity"), tv("e", "sanitized")], [])]
    out = leak_breakdown(records)
    assert out["failed_targets"] == 4
    assert out["counts"] == {"direct": 2, "inference": 1, "proximity": 1}
    assert out["ratios"]["direct"] == pytest.approx(50.0)


def test_failures_by_category_and_top_attributes():
    records = [
        rv("1", [tv("name", "direct")], [kv("k", True)], category="Health"),
        rv("2", [tv("name", "proximity"), tv("date", "direct")], [kv("k", True)], category="Health"),
        rv("3", [tv("name", "sanitized")], [kv("k", False)], category="Finance"),
        rv("4", [tv("name", "sanitized")], [kv("k", True)], category="Finance"),
    ]
    cats = {c["category"]: c for c in failures_by_category(records)}
    assert cats["Health"]["failed_records"] == 2 and cats["Finance"]["failed_records"] == 1
    assert cats["Health"]["share_of_failures"] == pytest.approx(100 * 2 / 3)
    top = top_failed_attributes(records, 1)
    assert top["targets"] == [{"name": "name", "failed": 2, "occurrences": 4, "failure_rate": 50.0, "share_of_failures": 100 * 2 / 3}]
    assert top["keep"][0]["name"] == "k"


def _many(n=40):
    out = []
    for i in range(n):
        tiers = ["sanitized", "direct" if i % 3 == 0 else "sanitized", "null" if i % 5 == 0 else "sanitized"]
        out.append(rv(str(i), [tv(f"t{j}", t) for j, t in enumerate(tiers)], [kv("k", i % 4 != 0), kv("l", True)]))
    return out


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    records = _many()
    a = bootstrap_ci(records, samples=300, seed=7, confidence=0.95)
    b = bootstrap_ci(records, samples=300, seed=7, confidence=0.95)
    c = bootstrap_ci(records, samples=300, seed=8, confidence=0.95)
    assert a == b and a != c
    point = headline_metrics(records)
    for key in HEADLINE_METRICS:
        assert a[key]["low"] <= point[key] <= a[key]["high"]
    assert a["full_successful_record"]["low"] < a["full_successful_record"]["high"]


def test_compute_metrics_is_json_clean():
    import json

    out = compute_metrics(_many(), bootstrap_samples=50, seed=1, confidence=0.9, top_failed=3)
    json.dumps(out, allow_nan=False)
    assert out["scored_records"] == 40 and out["bootstrap"]["samples"] == 50


def test_paired_bootstrap_identical_runs_and_common_ids():
    records = _many()
    same = paired_bootstrap(records, records, samples=200, seed=3, confidence=0.95)
    for row in same["metrics"].values():
        assert row["diff"] == 0 and row["ci_low"] == 0 and row["ci_high"] == 0
    worse = [rv(r.record_id, [tv("x", "direct")], r.keep) for r in records[:30]]
    cmp = paired_bootstrap(records, worse, samples=200, seed=3, confidence=0.95)
    assert cmp["common_records"] == 30 and cmp["only_a"] == 10 and cmp["only_b"] == 0
    row = cmp["metrics"]["sanitization_record"]
    assert row["diff"] > 0 and row["ci_low"] > 0 and row["p_value"] < 0.05
    assert not math.isnan(row["a"])


def test_bootstrap_in_small_chunks_equals_one_big_draw(monkeypatch):
    import privasis_bench.protocol.metrics as metrics_mod

    verdicts = _many(40)
    whole = compute_metrics(verdicts, bootstrap_samples=300, seed=11, confidence=0.95, top_failed=5)
    paired_whole = paired_bootstrap(verdicts, verdicts[::-1], samples=300, seed=11, confidence=0.95)
    monkeypatch.setattr(metrics_mod, "_BOOTSTRAP_CELLS", 7 * 40 + 3)  # 7 draws per chunk
    assert compute_metrics(verdicts, bootstrap_samples=300, seed=11, confidence=0.95, top_failed=5) == whole
    assert paired_bootstrap(verdicts, verdicts[::-1], samples=300, seed=11, confidence=0.95) == paired_whole


def test_metrics_from_streamed_tallies_equal_metrics_from_verdicts():
    from privasis_bench.protocol.tallies import MetricTallies

    verdicts = _many(40)
    tallies = MetricTallies()
    for v in iter(verdicts):  # one at a time, as a stream would deliver them
        tallies.add(v)
    kwargs = dict(bootstrap_samples=100, seed=3, confidence=0.9, top_failed=5)
    assert compute_metrics(tallies, **kwargs) == compute_metrics(verdicts, **kwargs)
    assert len(tallies) == 40 and tallies.record_ids == [v.record_id for v in verdicts]
