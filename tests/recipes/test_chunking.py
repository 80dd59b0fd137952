"""Chunking: natural boundaries, lists and tables kept whole, lossless, never over the limit."""

from __future__ import annotations

import random

import pytest

from privasis_bench.recipes.chunking import chunk_text, sentences

LIST = "Medications:\n- Metformin 500 mg twice daily\n- Lisinopril 10 mg each morning\n- Atorvastatin 20 mg at night\n"
TABLE = "| date | amount |\n|------|--------|\n| 2021-03-04 | 120.50 |\n| 2021-04-02 | 98.10 |\n"


def test_short_paragraphs_are_one_chunk_each():
    text = "First paragraph here.\n\nSecond one, also short.\n\n\nThird."
    chunks = chunk_text(text, 512)
    assert chunks == ["First paragraph here.\n\n", "Second one, also short.\n\n\n", "Third."]


@pytest.mark.parametrize("limit", [64, 128, 200, 512])
def test_lossless_and_bounded_on_varied_text(limit: int):
    rng = random.Random(limit)
    words = ["Dr.", "Smith", "visited", "e.g.", "3.14", "www.example.org/a.b", "on", "Jan.", "5,", "2021.", "Fine!", "Really?"]
    paragraphs = []
    for _ in range(12):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 60))) for _ in range(rng.randint(1, 5))]
        paragraphs.append("\n".join(lines))
    text = "\n\n".join(paragraphs) + "\n" + LIST + "\n" + TABLE
    chunks = chunk_text(text, limit)
    assert "".join(chunks) == text
    assert all(len(c) <= limit for c in chunks)
    assert all(c.strip() for c in chunks)


def test_newlines_after_periods_survive():
    text = "One sentence ends here.\nAnother starts here. " * 30
    assert "".join(chunk_text(text, 100)) == text


@pytest.mark.parametrize("block", [LIST, TABLE], ids=["list", "table"])
def test_lists_and_tables_stay_in_one_chunk(block: str):
    prose = "The patient reported mild symptoms during the review and asked about the schedule. " * 4
    text = prose.strip() + "\n" + block + prose.strip() + "\n" + prose.strip()
    assert len(text) > 512
    chunks = chunk_text(text, 512)
    assert "".join(chunks) == text
    assert any(block in c for c in chunks), [c[:40] for c in chunks]


def test_long_line_splits_between_sentences_not_after_abbreviations():
    line = "Dr. Okafor met Mr. J. Reyes at 10.45 a.m. on Jan. 5 about invoice no. 4471. " * 10
    chunks = chunk_text(line, 160)
    assert "".join(chunks) == line
    for c in chunks[:-1]:
        assert c.rstrip().endswith("4471."), c


def test_sentence_splitter_keeps_urls_numbers_and_titles_together():
    got = sentences("See www.site.org/v1.2 for Ver. 3.5 details. Prof. Lee agreed. Done")
    assert got == ["See www.site.org/v1.2 for Ver. 3.5 details. ", "Prof. Lee agreed. ", "Done"]
    assert "".join(got) == "See www.site.org/v1.2 for Ver. 3.5 details. Prof. Lee agreed. Done"


def test_a_single_huge_word_is_cut_at_the_limit():
    text = "x" * 1300
    chunks = chunk_text(text, 512)
    assert [len(c) for c in chunks] == [512, 512, 276] and "".join(chunks) == text


def test_empty_text_has_no_chunks():
    assert chunk_text("", 512) == []
