"""End to end on tab_sample, offline: ``run`` with the identity, regex-scrubber and presidio adapters, and
``evaluate --predictions`` in TAB's masked-output format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main

RUN = ["run", "-t", "tab_sample", "--no-progress", "--bootstrap-samples", "50"]


def _results(out: Path) -> dict:
    return json.loads((out / "tab_sample" / "results.json").read_text(encoding="utf-8"))


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "tab_sample" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_identity_masks_nothing_and_scores_zero_recall(tmp_path, monkeypatch, capsys):
    code, out, err = run_main([*RUN, "-m", "identity", "-o", str(tmp_path)], monkeypatch, capsys)
    assert code == 0, out + err
    res = _results(tmp_path)
    assert res["scorer"]["name"] == "tab" and res["judge"] is None and res["complete"] is True
    assert res["scorer"]["tokens"]["spacy_pipeline"]
    m = res["metrics"]
    assert m["mention_recall"] == 0.0 and m["recall_all_entities"] == 0.0 and m["token_precision"] == 0.0
    # as in the official script, tokens it ignores ("Mr", "of"...) count as masked even when nothing is
    assert 0.0 < m["token_recall"] < 0.2 and m["documents"] == 10
    rows = _rows(tmp_path)
    assert len(rows) == 10 and all(r["masked_spans"] == [] and r["span_source"] == "alignment" for r in rows)
    assert all(r["missed"] for r in rows)
    assert "token_recall" in out


def test_the_regex_scrubber_reports_its_spans_and_recovers_some_identifiers(tmp_path, monkeypatch, capsys):
    code, out, err = run_main([*RUN, "-m", "regex-scrubber:,names=true", "-o", str(tmp_path)], monkeypatch, capsys)
    assert code == 0, out + err
    m = _results(tmp_path)["metrics"]
    assert 0.0 < m["token_recall"] < 1.0 and 0.0 < m["token_precision"] <= 1.0
    assert m["ci"]["token_recall"]["low"] <= m["token_recall"] <= m["ci"]["token_recall"]["high"]
    rows = _rows(tmp_path)
    assert all(r["span_source"] == "system" for r in rows)
    doc = json.loads((Path(__file__).resolve().parents[2] / "tasks" / "sample" / "tab_sample.json").read_text())[0]
    assert "3 March 2004" in [doc["text"][s:e] for s, e in rows[0]["masked_spans"]]
    # re-running resumes from the journal and gives the same numbers
    code, _, _ = run_main([*RUN, "-m", "regex-scrubber:,names=true", "-o", str(tmp_path)], monkeypatch, capsys)
    assert code == 0 and _results(tmp_path)["metrics"]["token_recall"] == m["token_recall"]


def test_presidio_reports_spans_also_when_served_from_the_response_cache(tmp_path, monkeypatch, capsys):
    pytest.importorskip("presidio_analyzer")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    code, out, err = run_main([*RUN, "-m", "presidio", "-o", str(tmp_path / "a"), *cache], monkeypatch, capsys)
    assert code == 0, out + err
    m = _results(tmp_path / "a")["metrics"]
    assert m["token_recall"] > 0.2 and all(r["span_source"] == "system" for r in _rows(tmp_path / "a"))
    code, out, err = run_main([*RUN, "-m", "presidio", "-o", str(tmp_path / "b"), *cache], monkeypatch, capsys)
    assert code == 0, out + err
    journal = [json.loads(line) for line in (tmp_path / "b" / "tab_sample" / "sanitized.jsonl").read_text().splitlines()]
    assert all(line["cached"] and line["spans"] for line in journal)
    assert _results(tmp_path / "b")["metrics"]["token_recall"] == m["token_recall"]


def test_evaluate_scores_a_tab_masked_output_file(tmp_path, monkeypatch, capsys):
    sample = json.loads((Path(__file__).resolve().parents[2] / "tasks" / "sample" / "tab_sample.json").read_text())
    gold = {d["doc_id"]: [[m["start_offset"], m["end_offset"]] for m in d["annotations"]["annotator1"]["entity_mentions"]
                          if m["identifier_type"] != "NO_MASK"] for d in sample}
    preds = tmp_path / "masked.json"
    preds.write_text(json.dumps(gold), encoding="utf-8")
    code, out, err = run_main(["evaluate", "-t", "tab_sample", "-p", str(preds), "-o", str(tmp_path / "run"),
                               "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code == 0, out + err
    m = _results(tmp_path / "run")["metrics"]
    assert 0.8 < m["token_recall"] < 1.0  # annotator 1's masks: the other annotators marked a few more
    assert m["ci"] == {}
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(dict(list(gold.items())[1:])), encoding="utf-8")
    code, out, err = run_main(["evaluate", "-t", "tab_sample", "-p", str(missing), "-o", str(tmp_path / "run3"),
                               "--bootstrap-samples", "0"], monkeypatch, capsys)
    res = _results(tmp_path / "run3")
    # as TAB's official script: a document the file omits is left out of every measure, and that is said, exit 0
    assert code == 0 and res["complete"] is True and res["failed_output_records"] == []
    assert res["left_out_records"] == [sample[0]["doc_id"]] and res["counts"]["left_out"] == 1
    assert res["metrics"]["scored_documents"] == 9
    assert "left out of every measure" in out and "score them as empty" not in out + err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"001-99999": [[0, 3]]}), encoding="utf-8")
    code, out, err = run_main(["evaluate", "-t", "tab_sample", "-p", str(bad), "-o", str(tmp_path / "run2")],
                              monkeypatch, capsys)
    assert code == 2 and "001-99999" in out + err


def test_rescore_recomputes_tab_metrics_from_the_samples_and_notices_a_changed_row(tmp_path, monkeypatch, capsys):
    code, out, err = run_main([*RUN, "-m", "regex-scrubber", "-o", str(tmp_path)], monkeypatch, capsys)
    assert code == 0, out + err
    code, out, err = run_main(["rescore", str(tmp_path)], monkeypatch, capsys)
    assert code == 0 and "match results.json" in out
    samples = tmp_path / "tab_sample" / "samples.jsonl"
    rows = _rows(tmp_path)
    rows[0]["counts"]["tok_masked"] += 1
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = run_main(["rescore", str(tmp_path)], monkeypatch, capsys)
    assert code == 1 and "token_recall" in out


def test_view_highlights_masked_spans_and_missed_identifiers(tmp_path, monkeypatch, capsys):
    code, out, err = run_main([*RUN, "-m", "regex-scrubber", "-o", str(tmp_path)], monkeypatch, capsys)
    assert code == 0, out + err
    code, out, err = run_main(["view", str(tmp_path)], monkeypatch, capsys)
    assert code == 0, out + err
    page = (tmp_path / "tab_sample" / "view.html").read_text(encoding="utf-8")
    assert page.count("<section") == 10
    assert "<mark class='masked' title='masked by the system'>3 March 2004</mark>" in page
    assert "<mark class='missed' title='missed (DIRECT PERSON, annotator1)" in page and "Łukasz" in page


def test_a_free_form_rewrite_is_aligned_back_to_masked_spans(tmp_path, monkeypatch, capsys):
    import re

    from fake_openai_server import FakeOpenAIServer

    def rewrite(prompt: str) -> str:
        """A model that follows the instruction loosely: drops the named person, replaces dates, adds a preamble."""
        person = re.search(r"so that (.+?) cannot", prompt).group(1)
        doc = prompt.split("Document:\n", 1)[1].rsplit("\n\n### Anonymised text:", 1)[0]
        for word in person.split():
            doc = doc.replace(word, "X")
        doc = re.sub(r"\b\d{1,2} (January|February|March|April|May|June|July|August|September|October|November|"
                     r"December) \d{4}\b", "[DATE]", doc)
        return "Here is the anonymised judgment.\n\n" + doc

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(reply=rewrite) as model:
        code, out, err = run_main([*RUN, "-m", f"openai:m,base_url={model.base_url}", "-o", str(tmp_path),
                                   "--no-cache"], monkeypatch, capsys)
    assert code == 0, out + err
    rows = _rows(tmp_path)
    assert all(r["span_source"] == "alignment" for r in rows)
    sample = json.loads((Path(__file__).resolve().parents[2] / "tasks" / "sample" / "tab_sample.json").read_text())
    masked = [sample[0]["text"][s:e] for s, e in rows[0]["masked_spans"]]
    assert "Łukasz Wiśniewski" in masked and "3 March 2004" in masked and "1961" not in masked
    m = _results(tmp_path)["metrics"]
    assert m["recall_direct_entities"] > 0 and m["token_precision"] > 0.9


def test_tab_test_reads_tabs_file_from_data_files_or_the_data_folder_and_says_how_when_missing(tmp_path, monkeypatch, capsys):
    sample = Path(__file__).resolve().parents[2] / "tasks" / "sample" / "tab_sample.json"
    monkeypatch.delenv("PRIVASIS_TAB_DATA", raising=False)
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_test", "-o", str(tmp_path / "none")], monkeypatch, capsys)
    assert code == 2 and "echr_test.json" in out + err and "--data-files" in out + err
    folder = tmp_path / "tab"
    folder.mkdir()
    (folder / "echr_test.json").write_text(sample.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("PRIVASIS_TAB_DATA", str(folder))
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_test", "-o", str(tmp_path / "env"), "--limit", "2",
                               "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code == 0, out + err
    res = json.loads((tmp_path / "env" / "tab_test" / "results.json").read_text())
    assert res["metrics"]["documents"] == 2 and res["dataset"]["data_files"][0]["name"] == "echr_test.json"
    assert len(res["dataset"]["data_files"][0]["sha256"]) == 64  # which file was read is on record
    monkeypatch.delenv("PRIVASIS_TAB_DATA")
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_test", "-o", str(tmp_path / "flag"), "--data-files",
                               str(folder / "echr_test.json"), "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code == 0, out + err
