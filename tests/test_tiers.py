"""The tier rules and the tier check of tests/tiers.py (a test marked lighter than it is fails)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tiers


class _Item:
    """What the check reads of a collected test."""

    def __init__(self, tier: int, before: frozenset = frozenset()) -> None:
        self.nodeid = f"tests/fake.py::test_{tier}"
        self.path = tiers.TESTS / "fake.py"
        self.stash = pytest.Stash()
        self.stash[tiers._TIER] = tier
        self.stash[tiers._BEFORE] = before


def test_folders_and_files_have_their_tier() -> None:
    assert tiers.path_tier(tiers.TESTS / "integration" / "test_x.py") == tiers.INTEGRATION
    assert tiers.path_tier(tiers.TESTS / "docs_examples" / "test_new_block.py") == tiers.SLOW  # also a new file
    assert tiers.path_tier(tiers.TESTS / "adapters" / "test_hf_adapter.py") == tiers.SLOW
    assert tiers.path_tier(tiers.TESTS / "cli" / "test_anything.py") == tiers.UNIT


@pytest.mark.parametrize(("source", "tier"), [
    ("import json\n", tiers.UNIT),
    ("import torch\n", tiers.SLOW),
    ("from sentence_transformers import SentenceTransformer\n", tiers.SLOW),
    ("import pytest\nspacy = pytest.importorskip('spacy')\n", tiers.SLOW),
    ("import ray\n", tiers.INTEGRATION),
    ("import pytest\npytestmark = pytest.mark.slow\n", tiers.SLOW),
    ("import pytest\npytestmark = [pytest.mark.slow, pytest.mark.integration]\n", tiers.INTEGRATION),
    ("def test_x():\n    import torch\n", tiers.UNIT),  # inside a test: the run-time check's business
])
def test_a_files_source_gives_its_tier_without_importing_it(tmp_path: Path, source: str, tier: int) -> None:
    path = tmp_path / "test_source.py"
    path.write_text(source, encoding="utf-8")
    assert tiers.source_tier(path) == tier


def test_a_unit_test_that_loads_a_heavy_module_fails_the_check(monkeypatch) -> None:
    monkeypatch.setattr(tiers, "HEAVY", frozenset({"tiers_fake_heavy"}))
    item = _Item(tiers.UNIT)
    assert tiers.tier_problem(item) is None
    monkeypatch.setitem(sys.modules, "tiers_fake_heavy", object())
    assert "is in the unit tier but loaded tiers_fake_heavy" in tiers.tier_problem(item)
    assert tiers.tier_problem(_Item(tiers.SLOW)) is None  # the slow tier may load it
    assert tiers.tier_problem(_Item(tiers.UNIT, before=frozenset({"tiers_fake_heavy"}))) is None  # loaded earlier


def test_a_slow_test_that_loads_a_server_module_fails_the_check(monkeypatch) -> None:
    monkeypatch.setattr(tiers, "HEAVY", frozenset({"tiers_fake_server"}))
    monkeypatch.setattr(tiers, "SERVERS", frozenset({"tiers_fake_server"}))
    monkeypatch.setitem(sys.modules, "tiers_fake_server", object())
    assert "mark it (or its file in tests/tiers.py PATHS) integration" in tiers.tier_problem(_Item(tiers.SLOW))
    assert tiers.tier_problem(_Item(tiers.INTEGRATION)) is None


def test_starting_a_server_program_fails_the_check() -> None:
    item = _Item(tiers.UNIT)
    running = tiers._CURRENT[0]
    tiers._CURRENT[0] = item  # the audit hook records for the test that runs now
    try:
        subprocess.run(["true", "vllm", "serve"], check=True)  # argv names vllm; `true` starts nothing
    finally:
        tiers._CURRENT[0] = running
    assert "but loaded a server (true vllm serve)" in tiers.tier_problem(item)
