"""Reading TAB JSON: the shipped sample loads, and malformed files fail with one line naming where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.errors import DataError
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.spans import read_masked_output

SAMPLE = Path(__file__).resolve().parents[2] / "tasks" / "sample" / "tab_sample.json"


def _doc(**change):
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))[0]
    doc.update(change)
    return doc


def _write(tmp_path: Path, data) -> Path:
    path = tmp_path / "echr_x.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_sample_loads_with_typed_mentions():
    docs = load_documents(str(SAMPLE))
    assert len(docs) == 10
    first = docs[0]
    assert first.person == "Łukasz Wiśniewski"
    m = first.annotations["annotator1"][1]
    assert first.text[m.start_offset:m.end_offset] == m.span_text == "Mr Łukasz Wiśniewski"


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d.pop("text"), "missing field 'text'"),
    (lambda d: d["annotations"]["annotator1"]["entity_mentions"][0].update(end_offset=10**6), "offsets"),
    (lambda d: d["annotations"]["annotator1"]["entity_mentions"][0].update(identifier_type="MAYBE"), "identifier_type"),
    (lambda d: d["annotations"]["annotator1"]["entity_mentions"][0].pop("entity_id"), "missing field 'entity_id'"),
    (lambda d: d["annotations"]["annotator2"]["entity_mentions"][0].update(
        entity_id=d["annotations"]["annotator1"]["entity_mentions"][0]["entity_id"]), "unique per annotator"),
    (lambda d: d.update(annotations=[]), "annotations must be an object"),
])
def test_malformed_documents_name_the_file_document_and_field(tmp_path, mutate, expected):
    doc = _doc()
    mutate(doc)
    with pytest.raises(DataError) as err:
        load_documents(str(_write(tmp_path, [doc])))
    message = str(err.value)
    assert expected in message and "echr_x.json: document 1" in message and "\n" not in message


def test_a_file_that_is_not_a_list_or_missing_is_refused(tmp_path):
    with pytest.raises(DataError, match="expected a JSON list"):
        load_documents(str(_write(tmp_path, {"a": 1})))
    with pytest.raises(DataError, match="not found"):
        load_documents(str(tmp_path / "nope.json"))


def test_masked_output_files_are_checked_against_the_documents(tmp_path):
    texts = {"d1": "abcdef"}
    good = _write(tmp_path, {"d1": [[0, 2], [3, 6]]})
    assert read_masked_output(good, texts) == {"d1": [(0, 2), (3, 6)]}
    with pytest.raises(DataError, match="not in the task's data"):
        read_masked_output(_write(tmp_path, {"d9": []}), texts)
    with pytest.raises(DataError, match="pair of integer offsets"):
        read_masked_output(_write(tmp_path, {"d1": [[1]]}), texts)


def test_spans_the_official_script_accepts_are_kept_as_written_and_named_in_a_notice(tmp_path):
    from privasis_bench.tab.spans import span_notices

    texts = {"d1": "abcdef"}
    spans = read_masked_output(_write(tmp_path, {"d1": [[4, 9], [2, 2], [5, 3], [0, 1]]}), texts)
    assert spans == {"d1": [(4, 9), (2, 2), (5, 3), (0, 1)]}
    notes = span_notices("m.json", spans, texts)
    assert len(notes) == 2 and "2 span(s) are empty or reversed" in notes[0]
    assert "1 span(s) reach outside" in notes[1] and "d1" in notes[1]
    assert span_notices("m.json", {"d1": [(0, 6)]}, texts) == []


@pytest.mark.parametrize("body, expected", [
    ('[{"doc_id": "\\ud800", "text": "x"}]', "lone surrogate"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('[{"doc_id": "a", "x": NaN}]', "NaN"),
])
def test_the_tab_loader_reads_json_strictly_one_line_naming_the_file(tmp_path, body, expected):
    path = tmp_path / "echr_bad.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_documents(str(path))
    assert expected in str(err.value) and "echr_bad.json" in str(err.value) and "\n" not in str(err.value)


def test_a_task_names_a_known_scorer_and_the_privasis_scorer_needs_a_judge(tmp_path):
    from privasis_bench.errors import TaskConfigError
    from privasis_bench.tasks.registry import load_task, parse_task_file

    tab = load_task("tab_sample")
    assert tab.scorer == "tab" and tab.judge is None and tab.scorer_args["instruction_template"] in tab.template_files()
    assert load_task("privasis_sample").scorer == "privasis"
    base = Path(tab.source_file).parent
    for body, expected in (("scorer: rouge", "unknown scorer 'rouge'"), ("scorer: privasis", "needs a judge")):
        path = base / f"_tmp_{tmp_path.name}.yaml"  # beside the base file it includes
        try:
            path.write_text(f"task: tmp_task\ninclude: _tab_base.yaml\n{body}\ndataset:\n  data_files: sample/tab_sample.json\n",
                            encoding="utf-8")
            with pytest.raises(TaskConfigError, match=expected):
                parse_task_file(path)
        finally:
            path.unlink(missing_ok=True)


def test_the_config_hash_of_privasis_tasks_does_not_see_the_new_scorer_fields():
    from privasis_bench.tasks.registry import load_task

    committed = Path(__file__).resolve().parents[2] / "submissions" / "baselines__identity" / "privasis_sample" / "results.json"
    recorded = json.loads(committed.read_text(encoding="utf-8"))["task"]["config_hash"]
    assert load_task("privasis_sample").config_hash() == recorded  # the published hash still holds
    tab = load_task("tab_sample")
    assert tab.config_hash() != tab.model_copy(update={"scorer_args": {**tab.scorer_args, "weighted_precision": True}}).config_hash()


def test_weighted_precision_fails_at_once_with_one_line_when_the_model_is_not_at_hand(monkeypatch, tmp_path):
    from privasis_bench.errors import PrivasisError
    from privasis_bench.tab.scorer import TabScorer
    from privasis_bench.tasks.registry import load_task

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # an empty cache: bert-base-uncased is not there
    task = load_task("tab_sample")
    task = task.model_copy(update={"scorer_args": {**task.scorer_args, "weighted_precision": True}})
    with pytest.raises(PrivasisError) as err:
        TabScorer(task)
    assert "weighted" in str(err.value) and "\n" not in str(err.value)
