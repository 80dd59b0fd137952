"""intact: reports the character spans of the record text it replaced or removed (what TAB's scorer reads)."""

from __future__ import annotations

from privasis_bench.recipes.intact import edited, edited_spans


def test_edited_spans_are_exactly_the_replaced_and_removed_occurrences():
    text = "Anna Berg lives in Oslo and works at Acme. OSLO is large; Acmeville is not Acme."
    row = {"text": text, "drops": ["Acme"],
           "units": [{"span": "Oslo", "choice": "a city", "candidates": [], "level": 0}]}
    spans = edited_spans(row)
    assert [text[s:e] for s, e in spans] == ["Oslo", "Acme", "OSLO", "Acme"]  # not inside "Acmeville"
    out = edited(row)
    assert "Oslo" not in out and "OSLO" not in out and "Acmeville" in out and "Anna Berg" in out


def test_a_row_with_nothing_to_edit_reports_no_span():
    assert edited_spans({"text": "Nothing here.", "drops": [], "units": []}) == []
