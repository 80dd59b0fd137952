"""intact: reports the character spans of the record text it replaced or removed (what TAB's scorer reads)."""

from __future__ import annotations

from privasis_bench.recipes.intact import edited, edited_spans


def test_edited_spans_are_exactly_the_replaced_and_removed_occurrences():
    text = "Anna Berg lives in Oslo and works at Acme. OSLO is large; Acmeville is not Acme."
    row = {"text": text, "drops": ["Acme"],
           "units": [{"span": "Oslo", "choice": "a city", "candidates": [], "level": 0}]}
    spans = edited_spans(row)
    # not inside "Acmeville"; a removed span with the spaces the tidying removes around it
    assert [text[s:e] for s, e in spans] == ["Oslo", " Acme", "OSLO", " Acme"]
    out = edited(row)
    assert "Oslo" not in out and "OSLO" not in out and "Acmeville" in out and "Anna Berg" in out
    assert _outside_kept(text, spans, out)


def test_removed_spans_at_either_end_take_the_white_space_the_stripped_output_loses():
    text = "PROCEDURE\n\nThe case of Acme.\n\nTHE FACTS\n"
    row = {"text": text, "drops": ["PROCEDURE", "THE FACTS"], "units": []}
    spans = edited_spans(row)
    assert spans == [(0, 11), (len("PROCEDURE\n\nThe case of Acme."), len(text))]
    assert _outside_kept(text, spans, edited(row).strip())


def _outside_kept(text: str, spans: list[tuple[int, int]], out: str) -> bool:
    """Every stretch of ``text`` outside ``spans`` is in ``out``, in order, and nothing else is kept around them."""
    pos, last = 0, 0
    for start, end in [*spans, (len(text), len(text))]:
        keep = text[last:start]
        found = out.find(keep, pos)
        if found < 0 or (last == 0 and found != 0):
            return False
        pos, last = found + len(keep), end
    return pos == len(out)


def test_removed_spans_between_words_and_before_punctuation_leave_the_rest_unchanged():
    text = "Filed (Acme) by Anna  Acme , then Acme Acme; Oslo Acme.\nAcme said so."
    row = {"text": text, "drops": ["Acme"], "units": [{"span": "Oslo", "choice": "a city", "candidates": [], "level": 0}]}
    spans = edited_spans(row)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # sorted and disjoint
    assert _outside_kept(text, spans, edited(row))


def test_a_row_with_nothing_to_edit_reports_no_span():
    assert edited_spans({"text": "Nothing here.", "drops": [], "units": []}) == []
