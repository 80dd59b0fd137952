"""Calibration baselines: identity, empty, reference, mask-targets, regex-scrubber."""

from __future__ import annotations

import asyncio

import pytest

from privasis_bench.adapters.base import AdapterError, ChatRequest
from privasis_bench.adapters.baselines import mask_values, regex_scrub, value_strings
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.records import Attribute, Record
from privasis_bench.errors import ModelSpecError

TEXT = (
    "Dear Lena Okafor, this confirms your cleaning on March 14, 2024 at 10:40 AM for LENA OKAFOR. "
    "Patient no. 88213. Tags: molar, Crown. Questions? Call +1 555 0142."
)


def make_record() -> Record:
    return Record(
        id="r1",
        record_type="email",
        text=TEXT,
        base_instruction="- Drop the name.",
        smoothed_instruction="Remove the name.",
        reference_sanitized="Dear patient, this confirms your cleaning in mid-March.",
        targets=(
            Attribute("full_name", "Lena Okafor", "drop"),
            Attribute("first_name", "Lena", "drop"),
            Attribute("appointment", {"date": "March 14, 2024", "time": "10:40 AM"}, "abstract", "Appt"),
            Attribute("patient_number", 88213, "drop"),
            Attribute("tags", ["molar", "crown"], "drop"),
            Attribute("unknown", None, "drop"),
        ),
        keep=(Attribute("clinic_phone", "+1 555 0142", "keep"),),
    )


def run(provider: str, record: Record | None = None, **args) -> str | None:
    adapter = build_adapter(ModelSpec.parse(provider, args))
    request = ChatRequest.user("Sanitize this.", max_tokens=16, record=record)
    result = asyncio.run(adapter.agenerate(request))
    assert result.ok and result.finish_reason == "stop"
    return result.text


def test_identity_empty_reference():
    record = make_record()
    assert run("identity", record) == TEXT
    assert run("empty", record) == ""
    assert run("reference:anything", record) == record.reference_sanitized


def test_rankable_and_cacheable_flags():
    flags = {p: build_adapter(ModelSpec.parse(p)) for p in ("identity", "empty", "reference", "mask-targets", "regex-scrubber")}
    assert {p: a.rankable for p, a in flags.items()} == {
        "identity": True, "empty": True, "reference": False, "mask-targets": False, "regex-scrubber": True,
    }
    assert not any(a.cacheable for a in flags.values())


@pytest.mark.parametrize("provider", ["identity", "empty", "reference", "mask-targets", "regex-scrubber"])
def test_missing_record_is_a_non_retryable_error(provider):
    adapter = build_adapter(ModelSpec.parse(provider))
    with pytest.raises(AdapterError) as info:
        asyncio.run(adapter.agenerate(ChatRequest.user("x", max_tokens=4)))
    assert info.value.retryable is False


def test_mask_targets_masks_every_value_form_case_insensitively():
    out = run("mask-targets", make_record())
    for leaked in ("Lena", "Okafor", "OKAFOR", "March 14, 2024", "10:40 AM", "88213", "molar", "Crown"):
        assert leaked.lower() not in out.lower(), leaked
    # longest first: the full name is one placeholder, not "[REDACTED] Okafor"
    assert out.startswith("Dear [REDACTED], this confirms")
    assert "+1 555 0142" in out  # keep attributes are untouched


def test_mask_targets_custom_placeholder_and_unknown_arg():
    assert "<X>" in run("mask-targets", make_record(), placeholder="<X>")
    with pytest.raises(ModelSpecError, match="unknown model argument"):
        build_adapter(ModelSpec.parse("mask-targets,colour=red"))


def test_value_strings_and_mask_values():
    assert value_strings({"a": ["x", 2], "b": None, "c": 3.5}) == ["x", "2", "3.5"]
    assert value_strings(None) == [] and value_strings("  ") == []
    assert mask_values("a.b a*b", ["a.b"], "#") == "# a*b"  # values are literal, not regexes


def test_regex_scrubber_redacts_common_pii():
    text = (
        "Mail jo.bo@example.org or see https://clinic.example.com/p?id=9. Born 1990-02-03, seen 03/14/2024 "
        "and on 5 June 2023. Call (555) 123-4567 or +44 20 7946 0958. Account 4485-2291-0093. Paid $1,250.00 "
        "and 300 EUR. Meet Ms. Harper at 10:40."
    )
    out = run("regex-scrubber", Record("r", "t", text, "", "", "", (), ()))
    for leaked in ("jo.bo@example.org", "clinic.example.com", "1990-02-03", "03/14/2024", "5 June 2023",
                   "123-4567", "7946 0958", "4485-2291-0093", "1,250.00", "300 EUR"):
        assert leaked not in out, leaked
    for label in ("[EMAIL]", "[URL]", "[DATE]", "[PHONE]", "[ID]", "[MONEY]"):
        assert label in out, label
    assert "Ms. Harper" in out and "10:40" in out  # names only on request; times are not phone numbers


def test_regex_scrubber_names_option():
    out = regex_scrub("Dear Lena Okafor, Dr. Harper will call. The Clinic opens soon.", names=True)
    assert "Lena Okafor" not in out and "Harper" not in out
    assert "[NAME]" in out and "The Clinic" in out
