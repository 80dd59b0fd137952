"""The rows' measures and intervals, the estimator key, the chart, and the paper's numbers kept apart as published.
(The board family itself, verified recompute included, is tested in tests/leaderboard/test_replacement_family.py.)"""

from __future__ import annotations

from privasis_bench.replacement.chart import scatter_svg
from privasis_bench.replacement.published import published
from privasis_bench.replacement.summary import estimator_key, summarize_rows


def _rows():
    return [{"id": "a", "scored": True, "counts": {}, "by_type": {}, "tps": 0.8, "reidentified": True},
            {"id": "b", "scored": True, "counts": {}, "by_type": {}, "tps": 0.6, "reidentified": False},
            {"id": "c", "scored": False}]


def test_rows_give_tps_and_trir_with_intervals_and_nmi_is_carried_over():
    m = summarize_rows(_rows(), {"nmi": 0.5}, bootstrap_samples=200, seed=1, confidence=0.95)
    assert m["tps"] == 0.7 and m["trir"] == 0.5 and m["nmi"] == 0.5 and m["tps_documents"] == 2
    assert 0.6 <= m["ci"]["tps"]["low"] <= 0.7 <= m["ci"]["tps"]["high"] <= 0.8
    assert "token_recall" in m  # TAB's measures beside them


def test_the_estimator_key_changes_with_any_estimator():
    a = {"information_content": {"name": "wordfreq:en/best"}, "similarity": {"model": "m"}, "trir": {"attacker": "retrieval"}}
    b = {**a, "information_content": {"name": "mlm:bert-base-uncased/N=6"}}
    assert estimator_key(a) != estimator_key(b) and estimator_key(a) == estimator_key(dict(a))


def test_published_numbers_and_the_scatter():
    data = published()
    assert "never ranked" in data["status"] and len(data["rows"]) == 10
    suppression = data["rows"][0]
    assert suppression == {"method": "Suppression", "tps": 77.7, "nmi": 30.2, "trir": 11.0}
    svg = scatter_svg([("regex-scrubber", 0.4, 0.86)], published=[(r["method"], r["trir"] / 100, r["tps"] / 100)
                                                                  for r in data["rows"]])
    assert svg.startswith("<svg") and "regex-scrubber" in svg and svg.count("(as published)") == 10


def test_the_chart_refuses_runs_scored_with_different_estimators(tmp_path, monkeypatch, capsys):
    import json

    from cli_main import run_main

    dirs = []
    for name, key in (("a", "k1"), ("b", "k2")):
        d = tmp_path / name
        d.mkdir()
        (d / "results.json").write_text(json.dumps({"model": {"label": name}, "metrics": {
            "scorer": "tab_replacement", "tps": 0.8, "trir": 0.1, "estimator_key": key}}), encoding="utf-8")
        dirs.append(str(d))
    svg = tmp_path / "fig.svg"
    code, _, err = run_main(["replacement-chart", *dirs, "-o", str(svg)], monkeypatch, capsys)
    assert code == 2 and "different estimators" in err and not svg.exists()
    code, _, err = run_main(["replacement-chart", dirs[0], "-o", str(svg)], monkeypatch, capsys)
    assert code == 0 and ">a<" in svg.read_text(encoding="utf-8")
