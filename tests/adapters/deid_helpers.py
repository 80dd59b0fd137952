"""Helpers shared by the de-identification tool tests: a record with known entities, and the checks every tool's
reported spans and replacements must pass."""

from __future__ import annotations

import importlib.util
import os

import pytest

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.data.records import Attribute, Record

#: A note with known entities: a person, an e-mail address, a phone number, a date, a city, a US SSN, an IP address.
TEXT = ("Patient Maria Rossi (maria.rossi@example.com, +1 415 555 0132) was seen on 03/04/2024 in Boston by the "
        "cardiology team. SSN 123-45-6789, login from 10.0.0.1. The treatment plan was discussed at length.")


def need(*modules: str) -> None:
    """Skip the test module when a tool is not installed (CI installs every one: there it fails instead)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI"):
            raise RuntimeError(f"{', '.join(missing)} must be installed in CI (.ci/install-test-deps)")
        pytest.skip(f"not installed: {', '.join(missing)}", allow_module_level=True)


def request(text: str = TEXT, rid: str = "r1") -> ChatRequest:
    """A sanitization request whose record is ``text`` (the tools read the record, not the prompt)."""
    record = Record(id=rid, record_type="note", text=text, base_instruction="- Drop the name.", smoothed_instruction="x",
                    reference_sanitized="", targets=(Attribute("name", "Maria Rossi", "drop"),), keep=())
    return ChatRequest.user("ignored prompt", max_tokens=10, record=record)


def check_reported(text: str, result: ChatResult) -> dict[str, str]:
    """The result's spans and replacements rebuild its text exactly; returns {replaced original: replacement}."""
    assert result.ok and result.spans is not None and result.replacements is not None
    assert len(result.spans) == len(result.replacements)
    rebuilt, pos = [], 0
    for (start, end), written in zip(result.spans, result.replacements):
        assert pos <= start < end <= len(text)
        rebuilt += [text[pos:start], written]
        pos = end
    rebuilt.append(text[pos:])
    assert "".join(rebuilt) == result.text
    return {text[s:e]: w for (s, e), w in zip(result.spans, result.replacements)}
