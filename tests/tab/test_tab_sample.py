"""The bundled tab_sample: exactly its generator's output, covering what TAB's schema holds, and the property that
masking exactly one annotator's DIRECT and QUASI mentions gives that annotator recall 1 (real spaCy tokens)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.metrics import pooled, tally_document, total
from privasis_bench.tab.records import CONFIDENTIAL_STATUSES, ENTITY_TYPES, IDENTIFIER_TYPES, TabDocument

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "tasks" / "sample" / "tab_sample.json"
sys.path.insert(0, str(HERE))
import tab_sample_source  # noqa: E402


def test_the_shipped_sample_is_its_generators_output():
    assert SAMPLE.read_text(encoding="utf-8") == tab_sample_source.dumps()


def test_the_sample_covers_every_type_status_disagreement_and_unicode():
    docs = load_documents(str(SAMPLE))
    mentions = [m for d in docs for ms in d.annotations.values() for m in ms]
    assert {m.identifier_type for m in mentions} == set(IDENTIFIER_TYPES)
    assert {m.confidential_status for m in mentions} == set(CONFIDENTIAL_STATUSES)
    assert {m.entity_type for m in mentions} == set(ENTITY_TYPES)
    assert all(d.text[m.start_offset:m.end_offset] == m.span_text for d in docs for ms in d.annotations.values() for m in ms)
    per_entity = Counter((d.doc_id, m.entity_id) for d in docs for ms in d.annotations.values() for m in ms)
    assert max(per_entity.values()) >= 3
    assert all(len(d.annotators) >= 2 for d in docs) and any(len(d.annotators) >= 3 for d in docs)

    def view(doc: TabDocument, annotator: str) -> set:
        return {(m.start_offset, m.end_offset, m.identifier_type) for m in doc.annotations[annotator]}

    assert all(view(d, d.annotators[0]) != view(d, d.annotators[1]) for d in docs)
    assert any(not d.text.isascii() for d in docs) and any(not d.person.isascii() for d in docs)


@pytest.fixture(scope="module")
def spacy_ignore():
    from privasis_bench.tab.tokens import spacy_ignore_map

    return spacy_ignore_map()


def test_masking_one_annotators_direct_and_quasi_mentions_gives_that_annotator_recall_one(spacy_ignore):
    docs = load_documents(str(SAMPLE))
    for annotator_index in (0, 1):
        tallies = []
        for doc in docs:
            annotator = doc.annotators[annotator_index]
            spans = [(m.start_offset, m.end_offset) for m in doc.annotations[annotator] if m.needs_masking]
            alone = TabDocument(doc.doc_id, doc.text, doc.dataset_type, {annotator: doc.annotations[annotator]})
            tallies.append(tally_document(alone, spans, spacy_ignore))
        m = pooled(total(tallies))
        for key in ("token_recall", "mention_recall", "recall_direct_entities", "recall_quasi_entities",
                    "token_precision", "mention_precision"):
            assert m[key] == 1.0, (annotator_index, key, m[key])
        # scored against every annotator, the same spans miss what the others alone marked
        both = pooled(total(tally_document(d, [(m.start_offset, m.end_offset) for m in d.annotations[d.annotators[annotator_index]]
                                               if m.needs_masking], spacy_ignore) for d in docs))
        assert both["mention_recall"] < 1.0
