"""Span <-> replacement pairs, background-knowledge files and the paper's builder."""

from __future__ import annotations

import json

import pytest

from privasis_bench.errors import DataError
from privasis_bench.replacement.background import build_background, first_fraction, read_background, without_procedure
from privasis_bench.replacement.pairs import aligned_pairs, replacement_pairs
from privasis_bench.tab.records import TabDocument

TEXT = "The applicant, Mr John Smith, lives in Kraków since 3 March 2004."


def _span(s):
    start = TEXT.index(s)
    return (start, start + len(s))


def test_reported_spans_get_their_replacements_from_the_output():
    out = "The applicant, [PERSON], lives in a city in Poland since 2004."
    pairs = replacement_pairs(TEXT, out, [_span("Mr John Smith"), _span("Kraków"), _span("3 March 2004")])
    assert [(p.original, p.replacement) for p in pairs] == [
        ("Mr John Smith", "[PERSON]"), ("Kraków", "a city in Poland"), ("3 March 2004", "2004")]


def test_suppressed_spans_get_an_empty_replacement_and_adjacent_spans_join():
    out = "The applicant, , lives in  since ."
    pairs = replacement_pairs(TEXT, out, [_span("Mr John"), _span("Smith"), _span("Kraków"), _span("3 March 2004")])
    assert [(p.original, p.replacement) for p in pairs] == [("Mr John Smith", ""), ("Kraków", ""), ("3 March 2004", "")]


def test_a_free_form_rewrite_is_aligned_first():
    pairs = aligned_pairs(TEXT, "The applicant, a man, lives in Kraków since 3 March 2004.")
    assert [(p.original, p.replacement) for p in pairs] == [("Mr John Smith", "a man")]
    assert aligned_pairs(TEXT, TEXT) == []


def test_a_background_record_without_individual_id_is_one_line_naming_file_and_record(tmp_path):
    path = tmp_path / "bg.jsonl"
    path.write_text('{"individual_id": "a", "text": "x"}\n{"text": "y"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bg.jsonl: record 2: no individual_id"):
        read_background(path)
    path.write_text(json.dumps([{"individual_id": 7, "text": "seven"}]), encoding="utf-8")
    assert read_background(path)[0].individual_id == "7"


def _doc(doc_id, facts):
    return TabDocument(doc_id=doc_id, text=f"PROCEDURE\n\nLodged by X.\n\nTHE FACTS\n\n{facts}", dataset_type="test",
                       annotations={})


def test_the_builder_keeps_every_protected_individual_and_doubles_the_population():
    protected = [_doc("p1", "one two three four five six seven eight nine ten"), _doc("p2", "alpha beta")]
    pool = [_doc(f"o{i}", f"other {i}") for i in range(5)]
    bg = build_background(protected, pool, factor=2, fraction=1.0, seed=3)
    ids = [d.individual_id for d in bg]
    assert len(ids) == 4 and {"p1", "p2"} <= set(ids) and all(not d.text.startswith("PROCEDURE") for d in bg)
    assert build_background(protected, pool, factor=2, fraction=1.0, seed=3) == bg
    with pytest.raises(DataError, match="needs 8 other rulings"):
        build_background(protected, pool, factor=5)


def test_procedure_removal_and_first_fraction():
    assert without_procedure("PROCEDURE\n\nA.\n\nTHE FACTS\n\nB.").startswith("THE FACTS")
    assert without_procedure("No heading here") == "No heading here"
    assert first_fraction("aaaa bbbb cccc dddd", 0.5) == "aaaa bbbb"


def test_the_builder_command_writes_the_bundled_sample_background_and_refuses_bad_ranges(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    from cli_main import run_main

    sample = Path(__file__).resolve().parents[2] / "tasks" / "sample"
    out = tmp_path / "bg.jsonl"
    args = ["tab-background", "--protected", str(sample / "tab_sample.json"), "--pool",
            str(sample / "tab_background_pool_sample.json"), "-o", str(out)]
    code, o, e = run_main([*args, "--fraction", "1.0"], monkeypatch, capsys)
    assert code == 0, o + e
    assert out.read_bytes() == (sample / "tab_background_sample.jsonl").read_bytes()
    out.unlink()
    code, o, e = run_main([*args, "--fraction", "0"], monkeypatch, capsys)
    assert code == 2 and "--fraction" in e and len(e.strip().splitlines()) == 1 and not out.exists()
