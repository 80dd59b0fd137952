"""Attack class *which model wrote the outputs*, for models the verifier cannot run itself (issue 50.6): the
maintainer configures an endpoint per submitted model (never taken from the submission) and a comparison rule;
sampled or remote outputs are compared by normalised character similarity per record, and a failing endpoint
reproduces nothing."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
from adversarial_kit import REPO, read_json, rows_of

from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.regen_endpoints import load_endpoints, similarity
from privasis_bench.leaderboard.regenerate import board_mark, regenerate_entry, write_report
from privasis_bench.tasks.registry import load_task

sys.path.insert(0, str(REPO / "tests"))
from fake_openai_server import Action, FakeOpenAIServer  # noqa: E402

SMOLLM2 = REPO / "submissions" / "HuggingFaceTB__SmolLM2-135M-Instruct" / "privasis_sample"
PRESIDIO = REPO / "submissions" / "microsoft__presidio" / "privasis_sample"
FAST = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02, wait_for_server=0)
KEY = "sk-regen-do-not-leak-1234"


def _config(tmp_path: Path, base_url: str, **extra) -> Path:
    entry = {"model": "llamacpp:smollm2", "spec": "openai:served-smollm2",
             "args": {"base_url": base_url, "api_key_env": "REGEN_TEST_KEY", "timeout": 5}, **extra}
    path = tmp_path / "endpoints.yaml"
    path.write_text(json.dumps({"endpoints": [entry]}), encoding="utf-8")  # JSON is YAML
    return path


def _inputs():
    res, rows, task = read_json(SMOLLM2 / "results.json"), rows_of(SMOLLM2), load_task("privasis_sample")
    loaded, _ = task_records(task, limit=res["dataset"].get("limit"))
    return res, rows, task, {r.id: r for r in loaded.records}


def _replier(records, rows):
    """The served model: answers each prompt with the raw output the entry recorded for that record."""
    raw = {r["record_id"]: r.get("raw_output") or "" for r in rows}

    def reply(prompt: str) -> str:
        return next(raw[i] for i, rec in records.items() if i in raw and rec.text in prompt)
    return reply


def test_the_similarity_rule_ignores_cosmetic_edits_and_not_other_text():
    text = rows_of(SMOLLM2)[0]["output"]
    assert similarity(text, "  " + text.upper().replace(" ", "   ") + "\n") == 1.0
    other = rows_of(PRESIDIO)[0]["output"]
    assert similarity(text, other) < 0.9


def test_an_endpoints_file_is_checked_and_never_holds_a_key(tmp_path):
    good = load_endpoints(_config(tmp_path, "http://127.0.0.1:9/v1", threshold=0.95))
    assert good["llamacpp:smollm2"].threshold == 0.95 and "0.95" in good["llamacpp:smollm2"].describe_rule()
    for bad, word in (({"args": {"api_key": KEY}}, "api_key"), ({"rule": "close"}, "rule"),
                      ({"threshold": 1.5}, "threshold"), ({"base_url": "x"}, "unknown field")):
        path = tmp_path / "bad.yaml"
        entry = {"model": "llamacpp:smollm2", "spec": "openai:m", **bad}
        path.write_text(json.dumps({"endpoints": [entry]}), encoding="utf-8")
        with pytest.raises(PrivasisError) as err:
            load_endpoints(path)
        assert word in str(err.value) and str(path) in str(err.value) and KEY not in str(err.value)
        assert "\n" not in str(err.value)


def test_an_endpoint_reproduces_the_models_outputs_and_not_pasted_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("REGEN_TEST_KEY", KEY)
    res, rows, task, records = _inputs()
    with FakeOpenAIServer(reply=_replier(records, rows)) as server:
        endpoints = load_endpoints(_config(tmp_path, server.base_url))
        got = regenerate_entry("s/privasis_sample", res, rows, records, task, k=2, seed=5, endpoints=endpoints,
                               retry=FAST)
        assert sum(server.received.values()) == 2
        # another system's outputs for the same records under this model's name (seed 5 draws sample-med-02 and -04;
        # on sample-med-01 SmolLM2 barely changed the text, and any masker's output is as close to it as 0.80)
        pasted = copy.deepcopy(rows)
        presidio = {r["record_id"]: r["output"] for r in rows_of(PRESIDIO)}
        for row in pasted:
            row["output"] = presidio[row["record_id"]]
        forged = regenerate_entry("s/privasis_sample", res, pasted, records, task, k=2, seed=5, endpoints=endpoints,
                                  retry=FAST)
    assert got.passed and got.mark() == "outputs reproduced (2/2, similarity >= 0.80)"
    assert got.threshold == 0.8 and got.endpoint == "openai:served-smollm2" and min(got.similarities) >= 0.8
    assert not forged.passed and forged.mark() == "outputs as submitted" and max(forged.similarities) < 0.8
    write_report(tmp_path / "regenerate.json", [got])
    assert board_mark(tmp_path, "s/privasis_sample") == "outputs reproduced (2/2, similarity >= 0.80)"
    text = (tmp_path / "regenerate.json").read_text(encoding="utf-8")
    assert KEY not in text and "REGEN_TEST_KEY" not in text and "similarity >= 0.80" in text


def test_the_submission_cannot_pick_the_endpoint(tmp_path, monkeypatch):
    """A results.json naming a base_url of its own: the verifier calls the configured endpoint only."""
    monkeypatch.setenv("REGEN_TEST_KEY", KEY)
    res, rows, task, records = _inputs()
    with FakeOpenAIServer(reply=lambda p: "forger's server") as theirs, \
            FakeOpenAIServer(reply=_replier(records, rows)) as ours:
        claimed, their_url = copy.deepcopy(res), theirs.base_url
        claimed["model"]["spec"]["args"] = {"base_url": their_url}
        got = regenerate_entry("e", claimed, rows, records, task, k=1, seed=3,
                               endpoints=load_endpoints(_config(tmp_path, ours.base_url)), retry=FAST)
        assert sum(theirs.received.values()) == 0 and sum(ours.received.values()) == 1
    assert got.passed
    unconfigured = regenerate_entry("e", {**claimed, "model": {**claimed["model"], "label": "gpt-x", "spec": {
        "provider": "openai", "model": "gpt-x", "args": {"base_url": their_url}}}}, rows, records, task,
        k=1, seed=3, endpoints=load_endpoints(_config(tmp_path, "http://127.0.0.1:9/v1")), retry=FAST)
    assert unconfigured.asked == 0 and "not a local model" in (unconfigured.reason or "")


@pytest.mark.parametrize("fault", ["500", "429", "401"])
def test_a_failing_endpoint_reproduces_nothing_and_never_writes_the_key(tmp_path, monkeypatch, fault):
    monkeypatch.setenv("REGEN_TEST_KEY", KEY)
    res, rows, task, records = _inputs()
    with FakeOpenAIServer(script=lambda prompt, n: Action(fault, retry_after="0")) as server:
        got = regenerate_entry("e/t", res, rows, records, task, k=2, seed=3,
                               endpoints=load_endpoints(_config(tmp_path, server.base_url)), retry=FAST)
        assert sum(server.received.values()) >= (1 if fault == "401" else 2)  # a refused key stops at once
    assert got.asked == 2 and got.reproduced == 0 and got.failed_calls == 2 and "failed call" in (got.reason or "")
    write_report(tmp_path / "regenerate.json", [got])
    assert KEY not in (tmp_path / "regenerate.json").read_text(encoding="utf-8")
    assert board_mark(tmp_path, "e/t") == "outputs as submitted"


def test_an_unreachable_endpoint_is_a_recorded_failure(tmp_path, monkeypatch):
    from fake_openai_server import FakeOpenAIServer as _S

    monkeypatch.setenv("REGEN_TEST_KEY", KEY)
    res, rows, task, records = _inputs()
    with _S() as gone:
        url = gone.base_url
    got = regenerate_entry("e/t", res, rows, records, task, k=1, seed=3,
                           endpoints=load_endpoints(_config(tmp_path, url)), retry=FAST)
    assert got.asked == 1 and got.reproduced == 0 and got.failed_calls == 1


def test_the_documented_endpoints_file_loads(tmp_path):
    text = (REPO / "docs" / "publishing.md").read_text(encoding="utf-8")
    block = text.split("```yaml\nendpoints:", 1)[1].split("```", 1)[0]
    (tmp_path / "endpoints.yaml").write_text("endpoints:" + block, encoding="utf-8")
    endpoint = load_endpoints(tmp_path / "endpoints.yaml")["llamacpp:smollm2"]
    assert (endpoint.rule, endpoint.threshold, endpoint.args["api_key_env"]) == ("similarity", 0.8, "REGEN_KEY")


def test_an_endpoint_whose_key_is_not_set_is_said_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.delenv("REGEN_TEST_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    res, rows, task, records = _inputs()
    config = tmp_path / "endpoints.yaml"
    config.write_text(json.dumps({"endpoints": [{"model": "llamacpp:smollm2", "spec": "openai:gpt-x",
                                                 "args": {"api_key_env": "REGEN_TEST_KEY"}}]}), encoding="utf-8")
    got = regenerate_entry("e/t", res, rows, records, task, k=1, seed=3, endpoints=load_endpoints(config), retry=FAST)
    assert got.asked == 0 and got.mark() == "outputs as submitted" and "REGEN_TEST_KEY" in (got.reason or "")
