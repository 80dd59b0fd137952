"""The authors' ``eval_TPS.py`` and clustering code, run from a checkout given by path, equal the ``authors_code``
variants on the same estimators (``benchmarks/replacement_authors_check.py``). Needs the checkout: set
``PRIVASIS_AUTHORS_REPO`` to a checkout of IldikoPilan/text_sanitization at the pinned commit."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKOUT = os.environ.get("PRIVASIS_AUTHORS_REPO")


@pytest.mark.slow
@pytest.mark.skipif(not CHECKOUT, reason="set PRIVASIS_AUTHORS_REPO to a checkout of IldikoPilan/text_sanitization "
                                         "(the authors' code is run from it, never copied here)")
def test_the_authors_code_gives_the_same_numbers_as_the_authors_code_variants(tmp_path, tiny_bert):
    pytest.importorskip("intervaltree", reason="the authors' eval_TPS.py imports intervaltree")
    spec = importlib.util.spec_from_file_location("replacement_authors_check",
                                                  REPO / "benchmarks" / "replacement_authors_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    out = tmp_path / "check.json"
    code = check.main(["--authors-repo", CHECKOUT, "--mlm-model", tiny_bert, "--json", str(out), "--entries",
                       "microsoft__presidio-synthetic", "constructed__suppress-all", "constructed__one-phrase"])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0, report["failures"]
    assert report["authors_checkout"]["files"] == check.PINNED_SHA256
    entries = report["entries"]
    assert set(entries) == {"microsoft__presidio-synthetic", "constructed__suppress-all", "constructed__one-phrase"}
    # their code carries both TPS bugs: suppressing a whole document scores 1.0 there, 0.0 in both our variants
    assert entries["constructed__suppress-all"]["tps_theirs"] == pytest.approx(1.0)
    assert entries["constructed__suppress-all"]["tps_authors_code"] == 0.0
    assert entries["constructed__suppress-all"]["tps_paper"] == 0.0
    synthetic = entries["microsoft__presidio-synthetic"]
    assert synthetic["tps_max_diff_bugs"] <= check.TOLERANCE and synthetic["tps_max_diff_corrected"] <= check.TOLERANCE
    assert synthetic["nmi_authors_code"] == pytest.approx(synthetic["nmi_theirs"], abs=check.TOLERANCE)
    assert report["long_document"]["bug_vs_theirs"] <= check.TOLERANCE < report["long_document"]["fixed_vs_theirs"]
