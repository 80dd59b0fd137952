"""Checks on the bundled offline sample task, read as raw rows.

The file under test is ``tasks/sample/privasis_sample.jsonl`` (authored with
``tasks/sample/build_sample.py``). These tests read it with ``json`` and the standard library only, so
they do not depend on the ``privasis_bench`` package. They check that:

* every row has the Privasis-Zero benchmark row schema plus a ``category`` column;
* every target (drop/abstract) value and every keep value occurs verbatim in ``original_record``;
* the reference ``sanitized_record`` follows its instruction: no drop or abstract target value is
  left in it (case-insensitive) and every keep value is still there;
* the corner cases that the loader and scorer must handle are present, at the ids listed in
  ``CORNER_CASES`` below. That map is also the index of which row covers which case.
"""
from __future__ import annotations

import json
import runpy
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = ROOT / "tasks" / "sample"
SAMPLE = SAMPLE_DIR / "privasis_sample.jsonl"
BUILDER = SAMPLE_DIR / "build_sample.py"

BASE_COLUMNS = (
    "id",
    "record_type",
    "original_record",
    "sanitized_record",
    "base_instruction",
    "smoothed_instruction",
    "attributes_to_drop",
    "attributes_to_abstract",
    "attributes_to_keep",
    "grouped_annotated_attributes",
)
ATTR_COLUMNS = BASE_COLUMNS[6:]
CATEGORIES = {
    "Health & Wellness",
    "Government & Civic",
    "Business & Finance",
    "Personal & Family",
    "Community & Social",
    "Professional Services",
    "Education & Training",
    "Legal & Compliance",
    "Media & Communication",
    "Recreation & Lifestyle",
    "Technical & Operations",
}
# Domain is encoded in the id: sample-<domain>-NN.
REQUIRED_DOMAINS = ("med", "legal", "fin", "hr", "gov", "edu", "personal")

# Which rows cover which corner case. Each listed id must show the case (checked below).
CORNER_CASES = {
    "attr_columns_all_json_strings": [
        "sample-fin-01", "sample-legal-03", "sample-hr-02", "sample-gov-02",
        "sample-edu-03", "sample-personal-02", "sample-media-01",
    ],
    "attr_columns_all_objects": ["sample-med-01", "sample-legal-01", "sample-fin-03", "sample-tech-01"],
    "attr_columns_mixed_string_and_object": ["sample-med-02"],
    "selected_list_of_groups": ["sample-med-01", "sample-hr-01", "sample-comm-01", "sample-gov-02"],
    "selected_flat_dict": ["sample-med-02", "sample-med-04", "sample-fin-02", "sample-gov-02"],
    "selected_null": ["sample-legal-01", "sample-edu-02"],
    "selected_empty": ["sample-fin-02", "sample-personal-03"],
    "list_target_value": [
        "sample-med-01", "sample-legal-03", "sample-hr-01", "sample-personal-04", "sample-comm-01",
    ],
    "list_keep_value": ["sample-hr-03", "sample-gov-01", "sample-edu-01", "sample-personal-03"],
    "dict_target_value": ["sample-gov-01"],
    "dict_keep_value": ["sample-fin-03"],
    "number_target_value": ["sample-fin-01"],
    "number_keep_value": ["sample-med-02", "sample-personal-01", "sample-personal-04"],
    "null_target_value": ["sample-personal-01"],
    "null_keep_value": ["sample-hr-01"],
    "same_name_in_drop_and_abstract": ["sample-med-04"],
    "no_keep_empty_object": ["sample-comm-01"],
    "no_keep_empty_json_string": ["sample-media-01"],
    "grouped_multi_attribute_target": ["sample-med-01", "sample-legal-02", "sample-travel-01"],
    "individual_flat_target": ["sample-med-03", "sample-fin-02", "sample-tech-01"],
    "unicode_values": [
        "sample-med-02", "sample-fin-03", "sample-personal-01", "sample-tech-01", "sample-edu-03",
    ],
}


# --------------------------------------------------------------------------------------------- helpers

def load_rows() -> list[dict]:
    rows = []
    with SAMPLE.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            assert line.strip(), f"blank line {lineno} in {SAMPLE.name}"
            row = json.loads(line)
            assert isinstance(row, dict), f"line {lineno} is not a JSON object"
            rows.append(row)
    return rows


ROWS = load_rows() if SAMPLE.exists() else []
BY_ID = {row.get("id"): row for row in ROWS}
ROW_IDS = [row.get("id") for row in ROWS]


def decode(value):
    """A column may hold a JSON string or the decoded object."""
    return json.loads(value) if isinstance(value, str) else value


def selection(row: dict, column: str):
    return decode(row[column])["selected"]


def selected_entries(row: dict, column: str) -> list[tuple[str, object]]:
    """(name, value) pairs of a drop/abstract column in order."""
    sel = selection(row, column)
    if sel is None:
        return []
    if isinstance(sel, list):
        return [(name, value) for group in sel for name, value in group["attrs"].items()]
    return list(sel.items())


def targets(row: dict) -> dict[str, tuple[object, str]]:
    """name -> (value, kind), drop first then abstract; a later entry wins (protocol §1)."""
    out: dict[str, tuple[object, str]] = {}
    for column, kind in (("attributes_to_drop", "drop"), ("attributes_to_abstract", "abstract")):
        for name, value in selected_entries(row, column):
            out[name] = (value, kind)
    return out


def keeps(row: dict) -> dict[str, object]:
    return {name: entry["value"] for name, entry in decode(row["attributes_to_keep"]).items()}


def items(value) -> list[str]:
    """Strings to look for: list -> each item, dict -> each value, null -> nothing, else str(value)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, dict):
        return [str(v) for v in value.values()]
    return [str(value)]


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def paragraphs(text: str) -> int:
    return len([p for p in text.split("\n\n") if p.strip()])


# --------------------------------------------------------------------------------------------- basic shape

def test_file_exists_and_has_enough_rows():
    assert SAMPLE.exists(), f"missing {SAMPLE}"
    assert len(ROWS) >= 24


def test_ids_unique():
    dupes = [i for i, n in Counter(ROW_IDS).items() if n > 1]
    assert not dupes, dupes


@pytest.mark.parametrize("row_id", ROW_IDS)
def test_row_schema(row_id):
    row = BY_ID[row_id]
    for column in BASE_COLUMNS + ("category",):
        assert column in row, f"{row_id}: missing column {column}"
    for column in ("id", "record_type", "original_record", "sanitized_record", "base_instruction",
                   "smoothed_instruction", "category"):
        assert isinstance(row[column], str) and row[column].strip(), f"{row_id}: empty {column}"
    assert row["category"] in CATEGORIES, row["category"]
    assert row["sanitized_record"] != row["original_record"]

    for column in ("attributes_to_drop", "attributes_to_abstract"):
        col = decode(row[column])
        assert set(col) == {"selected", "group"}, f"{row_id}: {column} keys {sorted(col)}"
        assert isinstance(col["group"], bool)
        sel = col["selected"]
        assert sel is None or isinstance(sel, (list, dict)), f"{row_id}: {column}"
        if isinstance(sel, list):
            assert col["group"] is True, f"{row_id}: {column} lists groups but group is false"
            for group in sel:
                assert set(group) == {"attrs", "group_name"}
                assert isinstance(group["group_name"], str) and group["group_name"]
                assert isinstance(group["attrs"], dict) and group["attrs"]
        elif sel:
            assert col["group"] is False, f"{row_id}: {column} is flat but group is true"

    keep = decode(row["attributes_to_keep"])
    assert isinstance(keep, dict)
    for name, entry in keep.items():
        assert set(entry) >= {"value", "sanitization", "group_name"}, f"{row_id}: keep {name}"
        assert entry["sanitization"] == "keep"
        assert entry["group_name"] is None or isinstance(entry["group_name"], str)

    grouped = decode(row["grouped_annotated_attributes"])
    assert isinstance(grouped, dict) and grouped
    assert all(isinstance(attrs, dict) and attrs for attrs in grouped.values())


@pytest.mark.parametrize("row_id", ROW_IDS)
def test_attribute_names_are_snake_case(row_id):
    row = BY_ID[row_id]
    names = [n for n, _ in selected_entries(row, "attributes_to_drop")]
    names += [n for n, _ in selected_entries(row, "attributes_to_abstract")]
    names += list(keeps(row))
    for name in names:
        assert name == name.lower() and " " not in name and name.replace("_", "").isalnum(), name


@pytest.mark.parametrize("row_id", ROW_IDS)
def test_instructions(row_id):
    row = BY_ID[row_id]
    lines = [ln for ln in row["base_instruction"].splitlines() if ln.strip()]
    assert lines, f"{row_id}: empty base_instruction"
    assert all(ln.startswith("- ") for ln in lines), f"{row_id}: base lines must be '- ...'"
    smoothed = row["smoothed_instruction"]
    assert not smoothed.lstrip().startswith("-") and "\n" not in smoothed


@pytest.mark.parametrize("row_id", ROW_IDS)
def test_annotations_cover_targets_and_keeps(row_id):
    row = BY_ID[row_id]
    grouped = decode(row["grouped_annotated_attributes"])
    annotated = [(n, v) for attrs in grouped.values() for n, v in attrs.items()]
    entries = selected_entries(row, "attributes_to_drop")
    entries += selected_entries(row, "attributes_to_abstract")
    entries += list(keeps(row).items())
    for name, value in entries:
        assert (name, value) in annotated, f"{row_id}: {name}={value!r} not in grouped annotations"
    keep = decode(row["attributes_to_keep"])
    for name, entry in keep.items():
        if entry["group_name"] is not None:
            assert name in grouped[entry["group_name"]], f"{row_id}: keep {name} group_name"


# --------------------------------------------------------------------------------------------- content

@pytest.mark.parametrize("row_id", ROW_IDS)
def test_values_occur_verbatim_in_original(row_id):
    row = BY_ID[row_id]
    text = row["original_record"]
    entries = selected_entries(row, "attributes_to_drop")
    entries += selected_entries(row, "attributes_to_abstract")
    entries += list(keeps(row).items())
    for name, value in entries:
        for item in items(value):
            assert item in text, f"{row_id}: {name} value {item!r} not in original_record"


@pytest.mark.parametrize("row_id", ROW_IDS)
def test_original_word_count(row_id):
    words = len(BY_ID[row_id]["original_record"].split())
    assert 120 <= words <= 700, f"{row_id}: {words} words"


def test_long_multi_paragraph_records():
    long_rows = [r["id"] for r in ROWS
                 if len(r["original_record"]) > 512 and paragraphs(r["original_record"]) >= 2]
    assert len(long_rows) >= 8, long_rows
    assert sum(300 <= len(r["original_record"].split()) <= 600 for r in ROWS) >= 3


def test_domain_and_category_coverage():
    domains = Counter(row_id.split("-")[1] for row_id in ROW_IDS)
    for domain in REQUIRED_DOMAINS:
        assert domains[domain] >= 3, f"only {domains[domain]} '{domain}' rows"
    assert set(domains) - set(REQUIRED_DOMAINS), "no rows outside the required domains"
    assert len({row["category"] for row in ROWS}) >= 6


@pytest.mark.parametrize("row_id", ROW_IDS)
def test_reference_sanitization_satisfies_instruction(row_id):
    row = BY_ID[row_id]
    sanitized = row["sanitized_record"].lower()
    # Effective targets (abstract overrides drop), and every raw drop/abstract entry as well.
    raw = selected_entries(row, "attributes_to_drop") + selected_entries(row, "attributes_to_abstract")
    effective = [(name, value) for name, (value, _kind) in targets(row).items()]
    for name, value in effective + raw:
        for item in items(value):
            assert item.lower() not in sanitized, f"{row_id}: target {name} leaks {item!r}"
    for name, value in keeps(row).items():
        for item in items(value):
            assert item.lower() in sanitized, f"{row_id}: keep {name} lost {item!r}"


# --------------------------------------------------------------------------------------------- corner cases

def _forms(row):
    return [isinstance(row[c], str) for c in ATTR_COLUMNS]


def _all_target_values(row):
    return [v for _, v in selected_entries(row, "attributes_to_drop")
            + selected_entries(row, "attributes_to_abstract")]


def _selections(row):
    return [selection(row, c) for c in ("attributes_to_drop", "attributes_to_abstract")]


def _overlap(row):
    drop = dict(selected_entries(row, "attributes_to_drop"))
    abstract = dict(selected_entries(row, "attributes_to_abstract"))
    shared = [n for n in drop if n in abstract and drop[n] != abstract[n]]
    # The abstract entry must win, and both values must be in the text so a scorer can tell.
    return bool(shared) and all(
        targets(row)[n] == (abstract[n], "abstract")
        and all(i in row["original_record"] for i in items(drop[n]) + items(abstract[n]))
        for n in shared
    )


def _non_ascii(value):
    return any(ord(ch) > 127 for item in items(value) for ch in item)


PREDICATES = {
    "attr_columns_all_json_strings": lambda r: all(_forms(r)),
    "attr_columns_all_objects": lambda r: not any(_forms(r)),
    "attr_columns_mixed_string_and_object": lambda r: any(_forms(r)) and not all(_forms(r)),
    "selected_list_of_groups": lambda r: any(isinstance(s, list) and s for s in _selections(r)),
    "selected_flat_dict": lambda r: any(isinstance(s, dict) and s for s in _selections(r)),
    "selected_null": lambda r: any(s is None for s in _selections(r)),
    "selected_empty": lambda r: any(s == [] or s == {} for s in _selections(r)),
    "list_target_value": lambda r: any(isinstance(v, list) for v in _all_target_values(r)),
    "list_keep_value": lambda r: any(isinstance(v, list) for v in keeps(r).values()),
    "dict_target_value": lambda r: any(isinstance(v, dict) for v in _all_target_values(r)),
    "dict_keep_value": lambda r: any(isinstance(v, dict) for v in keeps(r).values()),
    "number_target_value": lambda r: any(is_number(v) for v in _all_target_values(r)),
    "number_keep_value": lambda r: any(is_number(v) for v in keeps(r).values()),
    "null_target_value": lambda r: any(v is None for v in _all_target_values(r)),
    "null_keep_value": lambda r: any(v is None for v in keeps(r).values())
    and any(v is not None for v in keeps(r).values()),
    "same_name_in_drop_and_abstract": _overlap,
    "no_keep_empty_object": lambda r: r["attributes_to_keep"] == {},
    "no_keep_empty_json_string": lambda r: isinstance(r["attributes_to_keep"], str)
    and json.loads(r["attributes_to_keep"]) == {},
    "grouped_multi_attribute_target": lambda r: any(
        isinstance(s, list) and any(len(g["attrs"]) >= 2 for g in s) for s in _selections(r)),
    "individual_flat_target": lambda r: any(isinstance(s, dict) and s for s in _selections(r)),
    "unicode_values": lambda r: any(_non_ascii(v) for v in _all_target_values(r) + list(keeps(r).values())),
}


def test_corner_case_map_is_complete():
    assert set(CORNER_CASES) == set(PREDICATES)


@pytest.mark.parametrize("case", sorted(CORNER_CASES))
def test_corner_case_present(case):
    ids = CORNER_CASES[case]
    assert ids, case
    for row_id in ids:
        assert row_id in BY_ID, f"{case}: unknown id {row_id}"
        assert PREDICATES[case](BY_ID[row_id]), f"{row_id} does not show corner case {case}"


def test_corner_case_counts():
    count = {case: sum(bool(pred(r)) for r in ROWS) for case, pred in PREDICATES.items()}
    assert count["attr_columns_all_json_strings"] >= 3
    assert count["attr_columns_all_objects"] >= 3
    assert count["grouped_multi_attribute_target"] >= 3
    assert count["individual_flat_target"] >= 3
    assert count["unicode_values"] >= 3
    # Rows with no keep attribute are excluded from scoring; most rows must stay scorable.
    no_keep = [r["id"] for r in ROWS if not keeps(r)]
    assert len(no_keep) >= 2 and len(ROWS) - len(no_keep) >= 24


# --------------------------------------------------------------------------------------------- builder sync

@pytest.mark.skipif(not BUILDER.exists(), reason="no builder script")
def test_jsonl_matches_builder():
    """The shipped JSONL is exactly what build_sample.py produces (regenerate it after edits)."""
    namespace = runpy.run_path(str(BUILDER), run_name="build_sample_under_test")
    expected = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in namespace["ROWS"])
    assert SAMPLE.read_text(encoding="utf-8") == expected, "run tasks/sample/build_sample.py"
