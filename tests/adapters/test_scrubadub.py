"""The scrubadub: adapter on the real scrubadub: what it removes and keeps, its settings, bad arguments."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest
from deid_helpers import TEXT, check_reported, need, request

from privasis_bench.adapters.registry import board_descriptions, build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import ModelSpecError

need("scrubadub")


def _run(spec: str, text: str = TEXT):
    adapter = build_adapter(ModelSpec.parse(spec))
    (result,) = adapter.generate_batch([request(text)])
    return adapter, result


def test_default_detectors_remove_contacts_and_keep_names():
    import scrubadub

    adapter, result = _run("scrubadub")
    replaced = check_reported(TEXT, result)
    assert {"maria.rossi@example.com": "{{EMAIL}}", "+1 415 555 0132": "{{PHONE}}",
            "123-45-6789": "{{SOCIAL_SECURITY_NUMBER}}"}.items() <= replaced.items()
    # its e-mail detector also reads spelled-out addresses ("name at host"), so "discussed at length" goes too
    assert replaced["discussed at length"] == "{{EMAIL}}"
    assert result.text == scrubadub.Scrubber().clean(TEXT)  # exactly what scrubadub's own clean() writes
    for kept in ("Maria Rossi", "Boston", "03/04/2024"):
        assert kept in result.text
    described = adapter.describe()
    assert described["tool"] == "scrubadub" and described["version"] == importlib.metadata.version("scrubadub")
    assert "phone" in described["detectors"] and described["replace"] == "type" and described["locale"] == "en_US"


@pytest.mark.parametrize("replace, email", [("type_count", "EMAIL-0"), ("remove", "")])
def test_post_processors(replace, email):
    _, result = _run(f"scrubadub:,replace={replace}")
    assert check_reported(TEXT, result)["maria.rossi@example.com"] == email


def test_hash_is_salted_and_repeatable():
    a, first = _run("scrubadub:,replace=hash")
    _, again = _run("scrubadub:,replace=hash")
    _, other = _run("scrubadub:,replace=hash,hash_salt=x")
    assert first.text == again.text != other.text and a.describe()["hash_salt"] == "privasis-bench"
    assert check_reported(TEXT, first)["maria.rossi@example.com"].startswith("EMAIL-")


def test_detector_choice_and_locale():
    adapter, result = _run("scrubadub:,detectors=email|date_of_birth,locale=en_GB")
    # date_of_birth only takes dates 18 to 100 years back: a 2024 visit date is kept
    assert check_reported(TEXT, result) == {"maria.rossi@example.com": "{{EMAIL}}", "discussed at length": "{{EMAIL}}"}
    born = "DOB: 12/03/1960."
    assert check_reported(born, adapter.generate_batch([request(born)])[0]) == {"12/03/1960": "{{DATE_OF_BIRTH}}"}
    assert adapter.describe()["detectors"] == ["date_of_birth", "email"] and adapter.describe()["locale"] == "en_GB"


@pytest.mark.parametrize("args, line", [
    ("replace=shred", "scrubadub: replace must be one of type, type_count, hash, remove, not 'shred'"),
    ("detectors=email|names", "scrubadub: detectors has unknown value(s) names; accepted (|-separated): credential|"),
    ("locale=xx_XX", "scrubadub: locale must be a language_REGION code"),
    ("colour=red", "scrubadub: unknown argument(s) colour; accepted: detectors, replace"),
])
def test_bad_arguments_are_one_line(args, line):
    with pytest.raises(ModelSpecError) as info:
        build_adapter(ModelSpec.parse(f"scrubadub:,{args}"))
    assert str(info.value).startswith(line) and "\n" not in str(info.value)


def test_spacy_detectors_need_scrubadub_spacy():
    if importlib.util.find_spec("scrubadub_spacy") is not None:
        pytest.skip("scrubadub_spacy is installed here")
    with pytest.raises(ModelSpecError, match="needs the 'scrubadub_spacy' package.*pip install scrubadub-spacy"):
        build_adapter(ModelSpec.parse("scrubadub:,detectors=spacy"))


def test_missing_extra_says_what_to_install(monkeypatch):
    import privasis_bench.adapters.deid as deid

    real = importlib.util.find_spec
    monkeypatch.setattr(deid.importlib.util, "find_spec", lambda name, *a: None if name == "scrubadub" else real(name, *a))
    with pytest.raises(ModelSpecError, match=r"needs the 'scrubadub' package.*privasis-bench\[scrubadub\]"):
        build_adapter(ModelSpec.parse("scrubadub"))


def test_board_sentence():
    assert "rule-based" in board_descriptions()["scrubadub"]
