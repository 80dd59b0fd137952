"""Span location and chunk splicing used by the corpus pipeline and the decomp adapter."""

from __future__ import annotations

from privasis_bench.recipes.decomp_adapter import parse_targets
from privasis_bench.recipes.decompose import locate, splice, verbatim_values


def test_locate_is_case_and_whitespace_insensitive_but_respects_word_edges():
    assert locate("lena  OKAFOR", "Dear Lena Okafor,") == "Lena Okafor"
    assert locate("34", "born in 2034") is None
    assert locate("34", "aged 34.") == "34"
    assert locate("  ", "anything") is None


def test_verbatim_values_flattens_lists_and_dicts():
    chunk = "Take Metformin and Lisinopril; see Dr. Haddad in Porto."
    found = verbatim_values([["Metformin", "Aspirin"], {"doctor": "Dr. Haddad"}, None], chunk)
    assert found == ["Metformin", "Dr. Haddad"]


def test_splice_keeps_surrounding_whitespace_and_final_punctuation():
    assert splice("\n  Call Lena today.\n\n", "Call the patient today") == "\n  Call the patient today.\n\n"
    assert splice("Done!", "Finished!") == "Finished!"


def test_decomp_targets_fall_back_to_instruction_lines():
    instruction = "- Remove the name 'Ana Lima'.\n- Generalize the visit date to the month."
    targets = parse_targets("", instruction, 8)
    assert [t["kind"] for t in targets] == ["drop", "abstract"]
    assert targets[0]["strategy"] == "Remove the name 'Ana Lima'."
    parsed = parse_targets("DROP: the name Ana Lima\nABSTRACT: the visit date, to a month", instruction, 8)
    assert [(t["kind"], t["label"]) for t in parsed] == [("drop", "the name Ana Lima"), ("abstract", "the visit date, to a month")]
    assert parse_targets("", "Please tidy it up.", 8)[0]["label"] == "Please tidy it up."
