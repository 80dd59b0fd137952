"""privasis-bench's SPIA scoring equals the official SPIA code's, unrounded (benchmarks/spia_official_check.py).

Needs a checkout of maisonOP/spia at the pinned commit, passed by path in SPIA_OFFICIAL_REPO (nothing of it is
copied into this project); skipped without it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
REPO = os.environ.get("SPIA_OFFICIAL_REPO")


@pytest.mark.skipif(not REPO, reason="set SPIA_OFFICIAL_REPO to a checkout of maisonOP/spia (3fa78a1)")
@pytest.mark.parametrize("seed", [0, 1])
def test_same_cpr_ipr_and_per_tag_as_the_official_code(seed):
    spec = importlib.util.spec_from_file_location("spia_check", ROOT / "benchmarks" / "spia_official_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    result = check.run(Path(REPO), ROOT / "tasks" / "spia" / "spia_sample.jsonl", seed)
    assert result["ours"] == result["official"], result
    assert result["matcher_questions"] > 0
