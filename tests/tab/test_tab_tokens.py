"""spaCy is loaded as TAB's official script loads it (the whole pipeline, parser included): on a constructed
mention whose "which" the parser makes a pronoun, a system that masks everything but that word scores 26/27 token
recall (0.963, the official figure), where a pipeline without the parser tags "which" a determiner, ignores it and
gives 1.000."""

from __future__ import annotations

import pytest

from privasis_bench.tab.metrics import pooled, tally_document
from privasis_bench.tab.records import Mention, TabDocument
from privasis_bench.tab.tokens import IgnoreMap, default_pipeline, spacy_ignore_map

TEXT = ("On 3 May 2001 the applicant sold the flat in Kirkenes, which his late father had bought from a local "
        "fishing cooperative in the spring of 1987 for the sum of 40,000 kroner, to his cousin.")
START = TEXT.index("the flat")
END = TEXT.index(", to his")
WHICH = TEXT.index("which")


def _doc() -> TabDocument:
    mention = Mention("m1", "e1", "MISC", START, END, TEXT[START:END], "QUASI")
    return TabDocument("d1", TEXT, "test", {"annotator1": (mention,)})


def _everything_but_which() -> list[tuple[int, int]]:
    return [(START, WHICH), (WHICH + len("which"), END)]


@pytest.fixture(scope="module")
def official_like() -> IgnoreMap:
    if default_pipeline() is None:
        pytest.skip("no English spaCy pipeline installed")
    return spacy_ignore_map()


def test_the_whole_pipeline_is_loaded_parser_included(official_like):
    components = official_like.description["spacy_components"]
    assert {"tagger", "parser", "attribute_ruler"} <= set(components)


def test_a_word_whose_class_depends_on_the_parser_scores_as_the_official_script(official_like):
    tally = tally_document(_doc(), _everything_but_which(), official_like)
    measures = pooled(tally)
    assert tally.counts["tok_total"] == 27
    assert tally.counts["tok_masked"] == 26
    assert round(measures["token_recall"], 3) == 0.963
    assert measures["mention_recall"] == 0.0


def test_without_the_parser_the_same_case_would_score_one():
    """The control: what the scorer gave when it loaded the pipeline without its parser."""
    name = default_pipeline()
    if name is None:
        pytest.skip("no English spaCy pipeline installed")
    import spacy

    nlp = spacy.load(name, exclude=["ner", "parser", "lemmatizer"])
    no_parser = IgnoreMap(lambda text: [(t.idx, t.idx + len(t), t.lower_, t.pos_) for t in nlp(text)], {})
    assert pooled(tally_document(_doc(), _everything_but_which(), no_parser))["token_recall"] == 1.0
