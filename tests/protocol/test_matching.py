"""Protocol §3-4 matching rules: value_in (any/all), value_text, think-stripping."""

from __future__ import annotations

import pytest

from privasis_bench.protocol.matching import is_empty_output, value_in, value_items, value_text


@pytest.mark.parametrize(
    "value, text, mode, expected",
    [
        ("Lena Okafor", "dear lena okafor, hello", "any", True),  # case-insensitive
        ("Lena Okafor", "Dear patient", "any", False),
        (["Lena", "Okafor"], "Dear Lena", "any", True),  # one list item leaked is a leak
        (["Lena", "Okafor"], "Dear Lena", "all", False),  # a keep list needs every item
        (["Lena", "Okafor"], "Dear Lena Okafor", "all", True),
        ({"city": "Lyon", "zip": "69001"}, "born in LYON", "any", True),  # dict: its values
        ({"city": "Lyon", "zip": "69001"}, "born in LYON", "all", False),
        ({"city": "Lyon", "zip": "69001"}, "Lyon 69001", "all", True),
        (42, "aged 42 years", "any", True),  # numbers via str()
        (4.5, "a 4.5 mg dose", "any", True),
        (4.5, "a 4,5 mg dose", "any", False),
        ([], "anything", "any", False),  # Python semantics for empty collections
        ([], "anything", "all", True),
        ([1, 2], "room 1", "any", True),
        ("x", None, "any", False),
        ("city", "{'city': 1}", "any", True),
    ],
)
def test_value_in(value, text, mode, expected):
    assert value_in(value, text, mode) is expected


def test_value_in_rejects_unknown_mode():
    with pytest.raises(ValueError):
        value_in("a", "a", "some")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("plain", "plain"),
        (["a", "b", 3], "a, b, 3"),
        ({"k": "v", "n": 2}, "v, 2"),
        (12, "12"),
        (1.5, "1.5"),
    ],
)
def test_value_text(value, expected):
    assert value_text(value) == expected


def test_value_items_nested_values_use_str():
    assert value_items({"a": ["x", "y"]}) == ["['x', 'y']"]


@pytest.mark.parametrize("text, expected", [(None, True), ("", True), ("  \n", True), ("x", False)])
def test_is_empty_output(text, expected):
    assert is_empty_output(text) is expected
