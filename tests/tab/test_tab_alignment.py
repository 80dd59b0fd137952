"""Aligning free-form rewrites back to masked spans of the original: replacements, deletions, insertions,
reorderings and paraphrases."""

from __future__ import annotations

from privasis_bench.tab.alignment import masked_spans

ORIGINAL = "Mr Jan Kowalski was born in 1961 in Łódź. He worked at the Huta steelworks until 1998."


def masked_text(original: str, rewrite: str) -> list[str]:
    return [original[s:e] for s, e in masked_spans(original, rewrite)]


def test_an_unchanged_text_masks_nothing_and_an_empty_one_masks_everything():
    assert masked_spans(ORIGINAL, ORIGINAL) == []
    assert masked_text(ORIGINAL, "") == [ORIGINAL.rstrip(".")]  # trailing punctuation is not a span


def test_placeholders_mask_exactly_the_replaced_words():
    rewrite = "Mr [NAME] was born in [YEAR] in [CITY]. He worked at the Huta steelworks until 1998."
    assert masked_text(ORIGINAL, rewrite) == ["Jan Kowalski", "1961", "Łódź"]


def test_deleted_words_are_masked_and_inserted_words_mask_nothing():
    rewrite = "Mr Jan Kowalski was born in Łódź, a large city. He worked at the Huta steelworks."
    words = {w for m in masked_text(ORIGINAL, rewrite) for w in m.split()}
    assert {"1961", "until", "1998"} <= words <= {"1961", "until", "1998", "in"}


def test_letter_case_does_not_count_as_a_change():
    assert masked_spans(ORIGINAL, ORIGINAL.upper()) == []


def test_a_moved_sentence_still_discloses_its_words():
    rewrite = "He worked at the Huta steelworks until 1998. Mr Jan Kowalski was born in 1961 in Łódź."
    assert masked_spans(ORIGINAL, rewrite) == []


def test_a_paraphrase_masks_what_it_dropped_and_not_what_it_kept():
    rewrite = "The applicant, Jan Kowalski, was born in Łódź and was employed by a steel plant for many years."
    masked = masked_text(ORIGINAL, rewrite)
    joined = " | ".join(masked)
    assert "1961" in joined and "1998" in joined and "Huta" in joined
    assert not any("Kowalski" in m or "Łódź" in m for m in masked)


def test_spans_are_character_offsets_of_the_original():
    for start, end in masked_spans(ORIGINAL, "Someone was born in 1961 in Łódź."):
        assert 0 <= start < end <= len(ORIGINAL)
        assert ORIGINAL[start:end] == ORIGINAL[start:end].strip()
