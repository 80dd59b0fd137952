"""Every normalization rule of protocol §1, table-driven."""

from __future__ import annotations

import json

import pytest

from privasis_bench.data.normalize import RowError, normalize_row
from privasis_bench.data.records import EXCLUDED_NO_KEEP


def make_row(**overrides):
    row = {
        "id": "r1",
        "record_type": "Clinic letter",
        "original_record": "Dear Ana Silva, your visit on 3 May 2024 at Rua Azul 5. Call 555-0100.",
        "sanitized_record": "Dear patient, your visit in May. Call 555-0100.",
        "base_instruction": "- Drop the name.",
        "smoothed_instruction": "Please remove the name.",
        "attributes_to_drop": {"selected": {"full_name": "Ana Silva"}, "group": False},
        "attributes_to_abstract": {"selected": None, "group": False},
        "attributes_to_keep": {"phone": {"value": "555-0100", "sanitization": "keep", "group_name": None}},
        "grouped_annotated_attributes": {"Patient": {"full_name": "Ana Silva"}},
    }
    row.update(overrides)
    return row


def targets_of(record):
    return {t.name: (t.value, t.kind, t.group) for t in record.targets}


GROUPS = [
    {"attrs": {"visit_date": "3 May 2024", "address": "Rua Azul 5"}, "group_name": "Visit"},
    {"attrs": {"phone_list": ["555-0100", "555-0199"]}, "group_name": "Contact"},
]

SELECTION_CASES = [
    pytest.param({"selected": {"full_name": "Ana Silva"}, "group": False}, None,
                 {"full_name": ("Ana Silva", "drop", None)}, id="flat-dict-drop"),
    pytest.param({"selected": GROUPS, "group": True}, None,
                 {"visit_date": ("3 May 2024", "drop", "Visit"), "address": ("Rua Azul 5", "drop", "Visit"),
                  "phone_list": (["555-0100", "555-0199"], "drop", "Contact")}, id="list-of-groups"),
    pytest.param({"selected": None, "group": False}, None, {}, id="null-selected"),
    pytest.param({"selected": [], "group": True}, None, {}, id="empty-list-selected"),
    pytest.param({"selected": {}, "group": False}, None, {}, id="empty-dict-selected"),
    pytest.param(None, None, {}, id="whole-column-null"),
    pytest.param({"selected": {"full_name": "Ana Silva"}}, {"selected": {"full_name": "Ana"}, "group": False},
                 {"full_name": ("Ana", "abstract", None)}, id="abstract-overrides-drop"),
    pytest.param({"selected": {"a": "x"}}, {"selected": [{"attrs": {"b": "y"}, "group_name": "G"}]},
                 {"a": ("x", "drop", None), "b": ("y", "abstract", "G")}, id="drop-then-abstract"),
    pytest.param({"selected": {"n": 42, "d": {"street": "Rua Azul 5", "city": "Porto"}, "z": None}}, None,
                 {"n": (42, "drop", None), "d": ({"street": "Rua Azul 5", "city": "Porto"}, "drop", None),
                  "z": (None, "drop", None)}, id="number-dict-null-values"),
]


@pytest.mark.parametrize("drop, abstract, expected", SELECTION_CASES)
@pytest.mark.parametrize("as_json_string", [False, True], ids=["object", "json-string"])
def test_target_selection(drop, abstract, expected, as_json_string):
    abstract = abstract if abstract is not None else {"selected": None}
    if as_json_string:
        drop, abstract = json.dumps(drop), json.dumps(abstract)
    record = normalize_row(make_row(attributes_to_drop=drop, attributes_to_abstract=abstract), row_number=1)
    assert targets_of(record) == expected


def test_drop_targets_come_before_abstract_targets():
    record = normalize_row(make_row(
        attributes_to_drop={"selected": {"b": "1", "a": "2"}},
        attributes_to_abstract={"selected": {"c": "3"}}), row_number=1)
    assert [t.name for t in record.targets] == ["b", "a", "c"]


KEEP_CASES = [
    pytest.param({"phone": {"value": "555-0100", "sanitization": "keep", "group_name": "Clinic"}},
                 [("phone", "555-0100", "Clinic")], None, id="one-keep"),
    pytest.param({"tags": {"value": ["a", "b"], "sanitization": "keep"}, "n": {"value": None, "sanitization": "keep"}},
                 [("tags", ["a", "b"], None), ("n", None, None)], None, id="list-and-null-keep"),
    pytest.param({}, [], EXCLUDED_NO_KEEP, id="empty-keep-excluded"),
    pytest.param(None, [], EXCLUDED_NO_KEEP, id="null-keep-excluded"),
    pytest.param("{}", [], EXCLUDED_NO_KEEP, id="json-string-empty-keep-excluded"),
    pytest.param('{"k": {"value": 7, "sanitization": "keep"}}', [("k", 7, None)], None, id="json-string-keep"),
]


@pytest.mark.parametrize("keep, expected, excluded", KEEP_CASES)
def test_keep_attributes(keep, expected, excluded):
    record = normalize_row(make_row(attributes_to_keep=keep), row_number=1)
    assert [(k.name, k.value, k.group) for k in record.keep] == expected
    assert all(k.kind == "keep" for k in record.keep)
    assert record.excluded_reason == excluded


def test_null_keep_value_still_counts_as_a_keep_attribute():
    record = normalize_row(make_row(attributes_to_keep={"x": {"value": None, "sanitization": "keep"}}), row_number=1)
    assert not record.excluded and not record.keep[0].judged


@pytest.mark.parametrize("column, value", [("category", "Health & Wellness"), ("tag", "medical")])
def test_category_column_detected(column, value):
    record = normalize_row(make_row(**{column: value}), row_number=1)
    assert record.category == value and record.breakdown_category == value
    assert record.extra[column] == value


def test_category_falls_back_to_record_type():
    record = normalize_row(make_row(), row_number=1)
    assert record.category is None and record.breakdown_category == "Clinic letter"


def test_unknown_columns_kept_and_instruction_variants():
    record = normalize_row(make_row(source_model="m1"), row_number=1)
    assert record.extra == {"source_model": "m1"}
    assert record.instruction("base") == "- Drop the name."
    assert record.instruction("smoothed") == "Please remove the name."
    with pytest.raises(ValueError):
        record.instruction("fancy")


def test_integer_id_becomes_text():
    assert normalize_row(make_row(id=17), row_number=1).id == "17"


MALFORMED = [
    pytest.param({"original_record": None}, "original_record", id="null-text"),
    pytest.param({"base_instruction": 5}, "base_instruction", id="wrong-type-instruction"),
    pytest.param({"attributes_to_drop": "{not json"}, "attributes_to_drop", id="bad-json"),
    pytest.param({"attributes_to_drop": 3}, "attributes_to_drop", id="wrong-type-attrs"),
    pytest.param({"attributes_to_drop": {"selected": "x"}}, "attributes_to_drop.selected", id="selected-wrong-type"),
    pytest.param({"attributes_to_drop": {"selected": [{"group_name": "G"}]}}, "attributes_to_drop.selected[0]", id="group-without-attrs"),
    pytest.param({"attributes_to_keep": {"x": "raw"}}, "attributes_to_keep.x", id="keep-entry-not-object"),
    pytest.param({"grouped_annotated_attributes": "[1]"}, "grouped_annotated_attributes", id="groups-not-mapping"),
    pytest.param({"id": None}, "id", id="missing-id"),
]


@pytest.mark.parametrize("override, field", MALFORMED)
def test_malformed_rows_name_id_and_field(override, field):
    with pytest.raises(RowError) as info:
        normalize_row(make_row(**override), row_number=4)
    assert info.value.field == field
    assert ("r1" in str(info.value)) or ("row 4" in str(info.value))


@pytest.mark.parametrize("column", ["original_record", "attributes_to_keep", "smoothed_instruction"])
def test_missing_column(column):
    row = make_row()
    del row[column]
    with pytest.raises(RowError, match="column is missing") as info:
        normalize_row(row, row_number=1)
    assert info.value.field == column


def test_optional_columns_may_be_absent():
    row = make_row()
    for column in ("record_type", "sanitized_record", "grouped_annotated_attributes"):
        del row[column]
    record = normalize_row(row, row_number=1)
    assert record.record_type == "" and record.reference_sanitized == "" and record.groups == {}
