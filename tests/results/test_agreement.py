"""Judge agreement: Cohen's kappa on hand-built verdict rows where the answer is known in advance, and the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.results.agreement import agreement_rows, cohen_kappa
from privasis_bench.results.files import ResultsError


@pytest.mark.parametrize(
    "a, b, kappa",
    [
        (["x", "x", "y", "y"], ["x", "x", "y", "y"], 1.0),  # perfect agreement
        (["x", "x", "y", "y"], ["x", "y", "x", "y"], 0.0),  # exactly chance
        (["x", "x", "y", "y"], ["y", "y", "x", "x"], -1.0),  # perfect disagreement
        (["r", "r", "l", "l"], ["r", "l", "l", "l"], 0.5),  # p_o 3/4, p_e 1/2
        (["d", "i", "s", "s"], ["d", "p", "s", "s"], 7 / 11),  # p_o 3/4, p_e 5/16
        (["x", "x"], ["x", "x"], None),  # one label throughout: chance agreement is 1, kappa undefined
        ([], [], None),
    ],
)
def test_cohen_kappa_known_values(a, b, kappa):
    got = cohen_kappa(a, b)
    assert got == pytest.approx(kappa) if kappa is not None else got is None


def test_cohen_kappa_matches_scikit_learn():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = __import__("random").Random(7)
    a = [rng.choice("dips") for _ in range(200)]
    b = [x if rng.random() < 0.7 else rng.choice("dips") for x in a]
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b))


def test_cohen_kappa_needs_pairs():
    with pytest.raises(ValueError):
        cohen_kappa(["x"], [])


def _target(name: str, tier: str) -> dict:
    return {"name": name, "kind": "drop", "group": None, "value": None if tier == "null" else f"v-{name}", "tier": tier}


def _keep(name: str, retained: bool | None) -> dict:
    return {"name": name, "value": f"k-{name}", "retained": retained, "via": "verbatim" if retained is not None else "unjudged"}


def _row(rid: str, targets: list[dict], keep: list[dict], output: str = "out") -> dict:
    status = "unjudged" if any(k["retained"] is None for k in keep) else "judged"
    return {"record_id": rid, "category": "c", "record_type": "t", "output_failed": False, "output": output,
            "status": status, "targets": targets, "keep": keep}


RUN_A = [
    _row("r1", [_target("name", "direct"), _target("phone", "inference"), _target("age", "null")],
         [_keep("k1", True), _keep("k2", True)]),
    _row("r2", [_target("name", "sanitized"), _target("city", "sanitized")], [_keep("k1", False), _keep("k2", False)]),
    _row("r3", [_target("name", "direct")], [_keep("k1", True)]),  # only in A
    _row("r4", [_target("name", "direct")], [_keep("k1", True)]),  # unjudged in B
]
RUN_B = [
    _row("r1", [_target("name", "direct"), _target("phone", "proximity"), _target("age", "null")],
         [_keep("k1", True), _keep("k2", False)]),
    _row("r2", [_target("name", "sanitized"), _target("city", "sanitized")], [_keep("k1", False), _keep("k2", False)],
         output="another output"),
    _row("r4", [_target("name", "sanitized")], [_keep("k1", None)]),
]


def test_agreement_on_hand_built_rows():
    report = agreement_rows(RUN_A, RUN_B, bootstrap_samples=50, seed=3)
    assert report["common_records"] == 2
    assert report["outputs_differ"] == 1
    tiers = report["leak_tier"]  # A: direct, inference, sanitized, sanitized; B: direct, proximity, sanitized x2
    assert tiers["decisions"] == 4 and tiers["agreement"] == 75.0
    assert tiers["kappa"] == pytest.approx(7 / 11)
    assert tiers["confusion"]["inference"]["proximity"] == 1 and tiers["confusion"]["sanitized"]["sanitized"] == 2
    assert report["leaked"]["kappa"] == pytest.approx(1.0)  # both call the same two targets leaks
    retention = report["retention"]  # A: T, T, F, F; B: T, F, F, F
    assert retention["decisions"] == 4 and retention["agreement"] == 75.0
    assert retention["kappa"] == pytest.approx(0.5)
    assert [(r["attribute"], r["kind"], r["disagreements"], r["decisions"]) for r in report["most_disagreed"]] == [
        ("phone", "target", 1, 1), ("k2", "keep", 1, 2)]
    deltas = report["metric_deltas"]
    assert deltas["common_records"] == 2 and deltas["only_a"] == 2
    assert deltas["metrics"]["retention_attribute"]["diff"] == pytest.approx(25.0)  # 50% vs 25%
    assert deltas["metrics"]["sanitization_attribute"]["diff"] == pytest.approx(0.0)


def _identity_run(out: Path) -> Path:
    result = CliRunner().invoke(app, ["run", "-m", "identity", "--judge", "none", "-t", "privasis_sample", "-o", str(out),
                                      "--no-cache", "--no-progress", "--bootstrap-samples", "50"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def test_agreement_cli(tmp_path):
    a = _identity_run(tmp_path / "a")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    samples = b / "privasis_sample" / "samples.jsonl"
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    flipped = next(r for r in rows if r["status"] == "judged")
    flipped["keep"][0]["retained"] = not flipped["keep"][0]["retained"]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "agreement.json"
    result = CliRunner().invoke(app, ["agreement", str(a), str(b), "--json", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "kappa" in result.output
    report = json.loads(out.read_text())["tasks"]["privasis_sample"]
    assert report["leak_tier"]["agreement"] == 100.0
    retention = report["retention"]
    assert retention["agreement"] * retention["decisions"] / 100 == pytest.approx(retention["decisions"] - 1)
    assert report["most_disagreed"][0]["attribute"] == flipped["keep"][0]["name"]
    with pytest.raises(ResultsError):
        from privasis_bench.results.agreement import agreement_runs
        agreement_runs(a, tmp_path / "missing")
