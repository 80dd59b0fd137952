"""What ``evaluate -p`` takes for a TAB task besides a complete masked-output file, scored as TAB's official script
scores it: a file with ``--limit``, spans the script accepts (empty, reversed, past the text), this harness's own
saved rewrites (``sanitized.jsonl``, ``samples.jsonl``); ``export-tab-masks`` writes a run back in TAB's format;
the task's split and data folder are checked."""

from __future__ import annotations

import json
from pathlib import Path

from cli_main import run_main

from privasis_bench.cli import task_cmds

SAMPLE = Path(__file__).resolve().parents[2] / "tasks" / "sample" / "tab_sample.json"
EVAL = ["evaluate", "-t", "tab_sample", "--bootstrap-samples", "0", "--no-progress"]


def _docs() -> list[dict]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def _gold(annotator: str = "annotator1") -> dict[str, list[list[int]]]:
    return {d["doc_id"]: [[m["start_offset"], m["end_offset"]] for m in d["annotations"][annotator]["entity_mentions"]
                          if m["identifier_type"] != "NO_MASK"] for d in _docs()}


def _results(out: Path, task: str = "tab_sample") -> dict:
    return json.loads((out / task / "results.json").read_text(encoding="utf-8"))


def test_limit_accepts_a_full_masks_file_and_scores_the_limited_documents(tmp_path, monkeypatch, capsys):
    preds = tmp_path / "masked.json"
    preds.write_text(json.dumps(_gold()), encoding="utf-8")
    code, out, err = run_main([*EVAL, "-p", str(preds), "-o", str(tmp_path / "run"), "--limit", "3"], monkeypatch, capsys)
    assert code == 0, out + err
    res = _results(tmp_path / "run")
    assert res["metrics"]["scored_documents"] == 3 and res["complete"] is True
    assert "7 document(s) of the file are past --limit" in out


def test_spans_the_official_script_accepts_are_scored_with_a_notice_and_exit_0(tmp_path, monkeypatch, capsys):
    gold = _gold()
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(gold), encoding="utf-8")
    first = next(iter(gold))
    n = len(_docs()[0]["text"])
    odd = {**gold, first: [*gold[first], [5, 5], [9, 4], [n - 3, n + 40]]}
    oddp = tmp_path / "odd.json"
    oddp.write_text(json.dumps(odd), encoding="utf-8")
    code, out, err = run_main([*EVAL, "-p", str(plain), "-o", str(tmp_path / "a")], monkeypatch, capsys)
    assert code == 0, out + err
    code, out, err = run_main([*EVAL, "-p", str(oddp), "-o", str(tmp_path / "b")], monkeypatch, capsys)
    assert code == 0, out + err
    assert "empty or reversed" in out and "reach outside" in out
    a, b = _results(tmp_path / "a"), _results(tmp_path / "b")
    assert b["notices"] and not a["notices"]
    # the empty and reversed spans add unmatched units of mention precision; recall is unchanged
    assert b["metrics"]["counts"]["men_units"] > a["metrics"]["counts"]["men_units"]
    assert b["metrics"]["token_recall"] == a["metrics"]["token_recall"]


def test_evaluate_reads_the_runs_own_saved_outputs_and_scores_them_as_the_run_did(tmp_path, monkeypatch, capsys):
    code, out, err = run_main(["run", "-t", "tab_sample", "-m", "regex-scrubber:,names=true", "-o", str(tmp_path / "run"),
                               "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code == 0, out + err
    want = _results(tmp_path / "run")["metrics"]
    for name in ("sanitized.jsonl", "samples.jsonl"):
        code, out, err = run_main([*EVAL, "-p", str(tmp_path / "run" / "tab_sample" / name), "-o", str(tmp_path / name)],
                                  monkeypatch, capsys)
        assert code == 0, out + err
        res = _results(tmp_path / name)
        assert res["model"]["predictions"]["format"] == "saved-outputs"
        assert {k: res["metrics"][k] for k in ("token_recall", "token_precision", "mention_recall")} == \
            {k: want[k] for k in ("token_recall", "token_precision", "mention_recall")}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "output": "a"}\n{"id": 3}\n', encoding="utf-8")
    code, out, err = run_main([*EVAL, "-p", str(bad), "-o", str(tmp_path / "bad")], monkeypatch, capsys)
    assert code == 2 and "bad.jsonl:2" in out + err and not (tmp_path / "bad" / "tab_sample").exists()


def test_export_tab_masks_writes_tabs_format_and_scoring_it_again_gives_the_same_measures(tmp_path, monkeypatch, capsys):
    code, out, err = run_main(["run", "-t", "tab_sample", "-m", "presidio", "-o", str(tmp_path / "run"),
                               "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code == 0, out + err
    masks = tmp_path / "out" / "masked.json"
    code, out, err = run_main(["export-tab-masks", str(tmp_path / "run"), "-o", str(masks)], monkeypatch, capsys)
    assert code == 0, out + err
    body = json.loads(masks.read_text(encoding="utf-8"))
    assert set(body) == {d["doc_id"] for d in _docs()} and all(isinstance(v, list) for v in body.values())
    code, out, err = run_main([*EVAL, "-p", str(masks), "-o", str(tmp_path / "again")], monkeypatch, capsys)
    assert code == 0, out + err
    a, b = _results(tmp_path / "run")["metrics"], _results(tmp_path / "again")["metrics"]
    assert a["official_rounded"] == b["official_rounded"]
    code, out, err = run_main(["export-tab-masks", str(tmp_path / "nothing"), "-o", str(masks)], monkeypatch, capsys)
    assert code == 2 and "nothing" in out + err


def test_a_split_task_refuses_documents_of_another_split(tmp_path, monkeypatch, capsys):
    docs = _docs()  # every sample document says dataset_type: test
    data = tmp_path / "echr_test.json"
    data.write_text(json.dumps(docs), encoding="utf-8")
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_dev", "--data-files", str(data), "-o",
                               str(tmp_path / "r")], monkeypatch, capsys)
    assert code == 2 and "'test'" in out + err and "tab_dev" in out + err and "\n" not in err.strip()
    assert not (tmp_path / "r" / "tab_dev").exists()
    mixed = [*docs[:3], *({**d, "dataset_type": "dev"} for d in docs[3:])]
    data.write_text(json.dumps(mixed), encoding="utf-8")
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_dev", "--data-files", str(data), "-o",
                               str(tmp_path / "m"), "--bootstrap-samples", "0", "--no-progress"], monkeypatch, capsys)
    assert code == 0 and "another split" in out
    assert any("another split" in n for n in _results(tmp_path / "m", "tab_dev")["notices"])


def test_the_data_folder_accepts_the_documented_variants_and_names_what_it_looked_for(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRIVASIS_TAB_DATA", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    code, out, err = run_main(["data", "inspect", "-t", "tab_test"], monkeypatch, capsys)
    assert code == 2 and "echr_test.json" in out + err and "test.json" in out + err
    assert "text-anonymization-benchmark-master" in out + err
    for where in ("test.json", "text-anonymization-benchmark/echr_test.json",
                  "text-anonymization-benchmark-master/echr_test.json"):
        folder = tmp_path / where.replace("/", "_")
        (folder / where).parent.mkdir(parents=True)
        (folder / where).write_text(SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
        monkeypatch.setenv("PRIVASIS_TAB_DATA", str(folder))
        code, out, err = run_main(["data", "inspect", "-t", "tab_test", "--json"], monkeypatch, capsys)
        assert code == 0, out + err
        assert json.loads(out)["documents"] == 10


def test_data_inspect_and_tasks_list_describe_tab_tasks(monkeypatch, capsys):
    code, out, err = run_main(["data", "inspect", "-t", "tab_sample", "--json"], monkeypatch, capsys)
    assert code == 0, out + err
    stats = json.loads(out)
    assert stats["documents"] == 10 and stats["mentions"] > 100 and stats["dataset_type"] == {"test": 10}
    # the command's console was made at import, maybe before this test: set its width, not COLUMNS
    monkeypatch.setattr(task_cmds.console, "width", 300)
    code, out, err = run_main(["tasks", "list"], monkeypatch, capsys)
    assert code == 0
    line = next(x for x in out.splitlines() if "tab_test" in x)
    assert "github.com/NorskRegnesentral/text-anonymization-benchmark" in line and "hf://" not in line


def test_a_document_without_annotations_is_left_out_of_recall_with_a_notice(tmp_path, monkeypatch, capsys):
    docs = _docs()
    docs[0]["annotations"] = {}
    data = tmp_path / "tab.json"
    data.write_text(json.dumps(docs), encoding="utf-8")
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_sample", "--data-files", str(data), "-o",
                               str(tmp_path / "r"), "--limit", "1", "--bootstrap-samples", "0", "--no-progress"],
                              monkeypatch, capsys)
    assert code == 0, out + err
    res = _results(tmp_path / "r")
    assert res["metrics"]["token_recall"] is None and res["metrics"]["official_rounded"]["token_recall"] == 0.0
    assert "no annotated mention needing masking" in out and "nothing to count" in out
