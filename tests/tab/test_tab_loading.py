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
    with pytest.raises(DataError, match="not inside its text"):
        read_masked_output(_write(tmp_path, {"d1": [[4, 9]]}), texts)
    with pytest.raises(DataError, match="pair of integer offsets"):
        read_masked_output(_write(tmp_path, {"d1": [[1]]}), texts)
