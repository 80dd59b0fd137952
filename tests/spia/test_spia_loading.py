"""SPIA files are read strictly: one error naming the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.errors import DataError
from privasis_bench.spia.loading import load_documents
from privasis_bench.spia.records import TAGS
from privasis_bench.tasks.paths import builtin_tasks_dir

SAMPLE = builtin_tasks_dir() / "spia" / "spia_sample.jsonl"


def _row(**overrides):
    subject = {"id": 0, "description": "the applicant", "PIIs": [
        {"tag": t, "keyword": "", "certainty": 0, "hardness": 0} for t in TAGS]}
    subject["PIIs"][0] = {"tag": "NAME", "keyword": "Ann Lee", "certainty": 5, "hardness": 1}
    row = {"metadata": {"data_id": "TAB-x", "number_of_subjects": 1, "annotator": "a"}, "text": "Ann Lee sued.",
           "subjects": [subject]}
    row.update(overrides)
    return row


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "spia.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_bundled_sample_reads_with_every_subject_and_slot():
    docs = load_documents(SAMPLE)
    assert [d.id for d in docs] == ["TAB-a5162", "TAB-54c4b", "PANORAMA-079D2", "PANORAMA-BE959", "PANORAMA-06079"]
    assert [len(d.subjects) for d in docs] == [4, 4, 1, 6, 3]
    assert all({a.tag for a in s.attributes} == set(TAGS) for d in docs for s in d.subjects)
    assert load_documents(SAMPLE, limit=2)[1].id == "TAB-54c4b"


def test_a_tag_may_hold_several_values(tmp_path):
    row = _row()
    row["subjects"][0]["PIIs"].append({"tag": "LOCATION", "keyword": "Oslo / Norway", "certainty": 4, "hardness": 2})
    row["subjects"][0]["PIIs"].append({"tag": "LOCATION", "keyword": "Bergen / Norway", "certainty": 3, "hardness": 2})
    (doc,) = load_documents(_write(tmp_path, json.dumps(row)))
    assert [a.keyword for a in doc.subjects[0].values("LOCATION")] == ["Oslo / Norway", "Bergen / Norway"]
    assert doc.subjects[0].tags_with_values() == ("NAME", "LOCATION")


def _broken(mutate):
    row = _row()
    mutate(row)
    return json.dumps(row)


@pytest.mark.parametrize("line, message", [
    ("{not json", ":2: not valid JSON"),
    ('{"metadata": {"data_id": "a", "data_id": "b"}, "text": "", "subjects": []}', ":2: duplicate key 'data_id'"),
    (_broken(lambda r: r.pop("text")), ":2: row.text: missing"),
    (_broken(lambda r: r["metadata"].update(data_id="")), ":2: metadata.data_id: empty"),
    (_broken(lambda r: r["subjects"][0]["PIIs"][0].update(certainty=6)), ":2: subjects[0].PIIs[0].certainty: 6 is outside 0-5"),
    (_broken(lambda r: r["subjects"][0]["PIIs"][0].update(hardness="3")), ":2: subjects[0].PIIs[0].hardness: expected int, got str"),
    (_broken(lambda r: r["subjects"][0]["PIIs"][0].update(certainty=True)), ":2: subjects[0].PIIs[0].certainty: expected int, got bool"),
    (_broken(lambda r: r["subjects"][0]["PIIs"][1].update(tag="SSN")), ":2: subjects[0].PIIs[1].tag: unknown tag 'SSN'"),
    (_broken(lambda r: r["subjects"][0]["PIIs"].pop()), ":2: subjects[0].PIIs: missing tag slot(s) POSITION"),
    (_broken(lambda r: r["metadata"].update(number_of_subjects=2)), ":2: metadata.number_of_subjects: says 2, the row has 1"),
    (_broken(lambda r: r["subjects"].append(r["subjects"][0])), ":2: subjects: two subjects share an id"),
    (json.dumps(_row()), ":2: metadata.data_id: 'TAB-x' appears on an earlier line"),
])
def test_a_bad_row_is_one_error_naming_file_line_and_field(tmp_path, line, message):
    path = _write(tmp_path, json.dumps(_row()), line)
    with pytest.raises(DataError) as info:
        load_documents(path)
    assert str(info.value) == f"{path}{message}" or str(info.value).startswith(f"{path}{message}")
    assert "\n" not in str(info.value)


def test_unreadable_files_are_one_line(tmp_path):
    with pytest.raises(DataError, match="cannot read the SPIA file"):
        load_documents(tmp_path / "absent.jsonl")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(DataError, match="not UTF-8 text"):
        load_documents(binary)
