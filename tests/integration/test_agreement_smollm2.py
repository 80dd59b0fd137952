"""``agreement`` end to end: one set of outputs judged twice by the real in-process llama.cpp SmolLM2, once with
the task's judge prompts and once with another wording (``--judge-prompts``), then compared.

The outputs come from the rule-based ``regex-scrubber`` so that both judgings see exactly the same text and
nothing but the judge wording differs. One record and short judge budgets keep it to a few minutes on 2 CPU cores.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.results.agreement import RETENTION_LABELS, TIER_LABELS
from privasis_bench.results.rescore import rescore_run

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TASK = "privasis_sample"
LIMIT = ["--limit", "1"]
# SmolLM2 rarely answers with a clean label; off-label answers are counted in the results and tolerated here.
BUDGET = ["--judge-guess-max-tokens", "16", "--judge-compare-max-tokens", "6", "--concurrency", "2", "--no-progress",
          "--max-off-label", "1000", "--bootstrap-samples", "50", "--judge-truncated-answers", "accept"]
OTHER_WORDING = {
    "guess_target.txt": "Here is a document.\n\n{text}\n\nFrom the document, what is the {attribute}? Even if it is "
                        "not written down, name your single best guess.\n{attribute}:",
    "compare.txt": "The real {attribute} is: {true_value}\nFirst guess (response1): {response1}\n"
                   "Second guess (response2): {response2}\nWhich guess comes nearer to the real value? "
                   "Reply with one of: response1, response2, both, neither.",
}


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_agreement_of_two_smollm2_judgings_with_different_prompts(tmp_path, in_process_smollm2):
    cache = ["--cache-dir", str(tmp_path / "cache")]
    prompts = tmp_path / "other_prompts"
    prompts.mkdir()
    for name, text in OTHER_WORDING.items():
        (prompts / name).write_text(text, encoding="utf-8")
    _invoke("sanitize", "-m", "regex-scrubber", "-t", TASK, "-o", str(tmp_path / "san"), *LIMIT, *cache, "--no-progress")
    preds = str(tmp_path / "san" / TASK / "sanitized.jsonl")
    common = ["-p", preds, "-t", TASK, "--judge", "llamacpp:smollm2", *LIMIT, *BUDGET, *cache]
    _invoke("evaluate", *common, "-o", str(tmp_path / "a"))
    _invoke("evaluate", *common, "--judge-prompts", str(prompts), "-o", str(tmp_path / "b"))
    res_a = json.loads((tmp_path / "a" / TASK / "results.json").read_text())
    res_b = json.loads((tmp_path / "b" / TASK / "results.json").read_text())
    hashes_a, hashes_b = res_a["judge"]["prompt_hashes"], res_b["judge"]["prompt_hashes"]
    assert hashes_a["guess_target"] != hashes_b["guess_target"] and hashes_a["compare"] != hashes_b["compare"]
    assert hashes_a["inclusion"] == hashes_b["inclusion"]  # only the overridden templates differ
    assert res_b["usage"]["judge"]["batches"] > 0  # the second wording was really put to SmolLM2, not read from cache

    out = _invoke("agreement", str(tmp_path / "a"), str(tmp_path / "b"), "--json", str(tmp_path / "agree.json"))
    assert "Cohen's kappa" in out and "judge agreement" in out
    report = json.loads((tmp_path / "agree.json").read_text())["tasks"][TASK]
    assert report["common_records"] == res_a["counts"]["scored"] > 0 and report["outputs_differ"] == 0
    assert report["leak_tier"]["decisions"] > 0 and report["retention"]["decisions"] > 0
    for key, labels in (("leak_tier", TIER_LABELS), ("leaked", ("leaked", "sanitized")), ("retention", RETENTION_LABELS)):
        part = report[key]
        cells = sum(n for row in part["confusion"].values() for n in row.values())
        assert cells == part["decisions"] and set(part["confusion"]) == set(labels)
        agree = sum(part["confusion"][label][label] for label in labels)
        assert part["agreement"] == pytest.approx(100.0 * agree / part["decisions"])
        assert part["kappa"] is None or -1.0 <= part["kappa"] <= 1.0
    # a direct (verbatim) leak does not depend on the judge: both judgings must agree on every one of them
    direct = report["leak_tier"]["confusion"]["direct"]
    assert sum(direct.values()) == direct["direct"]
    assert set(report["metric_deltas"]["metrics"]) >= {"full_successful_record", "sanitization_attribute"}
    for run in ("a", "b"):
        assert all(r.matches for r in rescore_run(tmp_path / run))  # agreement leaves both runs untouched
