"""SPIA end to end through the generic commands, against a deterministic local fake of an OpenAI-compatible server
for the model under test, the adversary and the matcher (tests/spia/spia_fakes.py): run, run --plan with a cost for
every role, --batch adversary / --batch matcher, a killed run resumed without paying twice, evaluate of saved texts
(SPIA's own ``anonymized_text`` rows too), rescore and compare."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import OK, REPO_ROOT, Action, FakeOpenAIServer

from privasis_bench.pipeline.spend import LEDGER_NAME
from privasis_bench.tasks.paths import builtin_tasks_dir
from tests.spia.spia_fakes import is_model_prompt, reply, writer

SAMPLE = builtin_tasks_dir() / "spia" / "spia_sample.jsonl"
TASK = "spia_sample"
MATCH = "Compare a reference value"


def _roles(url: str) -> list[str]:
    return ["--role", f"adversary=openai:adversary,base_url={url}", "--role", f"matcher=openai:matcher,base_url={url}"]


def _run_args(url: str, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "-m", f"openai:writer,base_url={url}", "-t", TASK, *_roles(url), "-o", str(out),
            "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "50", *extra]


def _results(run: Path) -> dict:
    return json.loads((run / TASK / "results.json").read_text())


def _rows(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / TASK / "samples.jsonl").read_text().splitlines()]


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    """One full run of the sample (in a process of its own), shared by the tests that read it."""
    base = tmp_path_factory.mktemp("spia-run")
    with FakeOpenAIServer(reply=reply) as server:
        proc = subprocess.run([sys.executable, "-m", "privasis_bench", *_run_args(server.base_url, base / "run",
                                                                                   base / "cache")],
                              env=_env(), capture_output=True, text=True, timeout=300)
        received = dict(server.received)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return base / "run", received


def _env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "sk-test",
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}


def test_a_run_asks_the_model_the_adversary_and_the_matcher_and_records_each(reference_run):
    run, received = reference_run
    res = _results(run)
    metrics = res["metrics"]
    assert res["complete"] and res["scorer"]["name"] == "spia" and res["scorer"]["decider"] == "rule_model"
    assert metrics["documents"] == metrics["scored_documents"] == 5
    assert metrics["attributes"] == 55 and 0 < metrics["cpr"] < 1 and 0 < metrics["ipr"] < 1
    assert metrics["span_recall"]["available"] is False  # the bundled sample ships no span annotations
    assert set(res["usage"]) >= {"model", "adversary", "matcher"}
    assert res["usage"]["model"]["requests"] == 5 and res["usage"]["adversary"]["requests"] == 15
    assert max(received.values()) == 1  # every distinct question asked once
    rows = _rows(run)
    assert all(r["scored"] and set(r["answers"]) == {"subjects", "profile_codes", "profile_descriptive", "align"}
               for r in rows)
    assert all(r["output"] == writer(r["output"]) for r in rows)  # the rewrite holds no digit, no title left


def test_the_writer_protects_more_than_the_original_text_and_compare_says_so(reference_run, tmp_path, monkeypatch,
                                                                             capsys, key):
    run, _ = reference_run
    with FakeOpenAIServer(reply=reply) as server:
        code, out, err = run_main(["run", "-m", "identity", "-t", TASK, *_roles(server.base_url), "-o",
                                   str(tmp_path / "intact"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                                   "--bootstrap-samples", "50"], monkeypatch, capsys)
    assert code == 0, out + err
    assert _results(tmp_path / "intact")["metrics"]["cpr"] < _results(run)["metrics"]["cpr"]
    report = tmp_path / "compare.json"
    code, out, err = run_main(["compare", str(run), str(tmp_path / "intact"), "--json", str(report)], monkeypatch, capsys)
    assert code == 0 and "cpr" in out.lower(), out + err
    compared = json.loads(report.read_text())["tasks"][TASK]
    assert compared["common_records"] == 5
    cpr = compared["metrics"]["cpr"]
    assert cpr["a"] == _results(run)["metrics"]["cpr"] and cpr["diff"] == pytest.approx(cpr["a"] - cpr["b"]) and cpr["diff"] > 0
    # a paired bootstrap over the five documents: the interval holds the difference, and no resample reverses it
    assert cpr["ci_low"] <= cpr["diff"] <= cpr["ci_high"] and cpr["ci_low"] >= 0 and 0 < cpr["p_value"] <= 1
    assert compared["bootstrap"] == {"samples": 50, "seed": 1234, "confidence": 0.95, "unit": "document"}


def test_rescore_recomputes_the_numbers_from_the_rows_alone(reference_run, tmp_path, monkeypatch, capsys):
    run, _ = reference_run
    code, out, err = run_main(["rescore", str(run)], monkeypatch, capsys)
    assert code == 0 and "match" in out, out + err
    import shutil

    forged = tmp_path / "forged"
    shutil.copytree(run, forged)
    results = _results(forged)
    results["metrics"]["cpr"] = 0.999
    (forged / TASK / "results.json").write_text(json.dumps(results))
    code, out, err = run_main(["rescore", str(forged)], monkeypatch, capsys)
    assert code != 0 and "cpr" in out + err, out + err


def test_the_plan_costs_every_role(tmp_path, monkeypatch, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:writer: {input: 1.0, output: 2.0}\nopenai:adversary: {input: 3.0, output: 4.0}\n"
                      "openai:matcher: {input: 0.5, output: 0.5}\n")
    code, out, err = run_main(["run", "-m", "openai:writer", "-t", TASK, "--role", "adversary=openai:adversary",
                               "--role", "matcher=openai:matcher", "-o", str(tmp_path / "o"), "--plan", "--no-cache",
                               "--prices", str(prices)], monkeypatch, capsys)
    assert code == 0, out + err
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "model openai:writer: 5 requests" in lines["model"] and "cost live 0.0218" in lines["model"]
    assert "adversary openai:adversary: at most 15 requests" in lines["adversary"] and "cost at most live" in lines["adversary"]
    # the matcher: five alignments and one value question per counted gold value (55)
    assert "matcher openai:matcher: at most 60 requests" in lines["matcher"] and "no price" not in lines["matcher"].split("batched")[0]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("role", ["adversary", "matcher"])
def test_batch_sends_one_role_in_batches(role, reference_run, tmp_path, monkeypatch, capsys, key):
    pytest.importorskip("openai")
    from fake_batch_server import FakeBatchServer

    with FakeBatchServer(reply=reply) as server:
        code, out, err = run_main(_run_args(server.base_url, tmp_path / "run", tmp_path / "cache", "--batch", role,
                                            "--batch-quiet", "0.2", "--batch-poll", "0.05", "--batch-max-wait", "10"),
                                  monkeypatch, capsys)
        assert code == 0, out + err
        assert server.batches
    res = _results(tmp_path / "run")
    asked = reference_run[1]
    matcher = sum(1 for p in asked if p.startswith(("Two lists describe", MATCH)))
    expected = {"adversary": 15, "matcher": matcher}[role]
    assert res["usage"][role]["batched_requests"] == expected and matcher > 5  # five alignments and value questions
    other = "matcher" if role == "adversary" else "adversary"
    assert not res["usage"][other].get("batched_requests")
    assert res["metrics"]["cpr"] == _results(reference_run[0])["metrics"]["cpr"]  # batched or live: same numbers


def test_a_killed_run_resumes_without_paying_twice(reference_run, tmp_path):
    """The run is killed (SIGKILL) while the matcher's value questions are in flight; the re-run asks only what was
    never answered: no question reaches the server twice, and the ledger's second invocation pays only the rest."""
    stalled: list[str] = []

    def script(prompt: str, seen: int) -> Action:
        if prompt.startswith(MATCH) and not stalled:
            stalled.append(prompt)
        return Action(kind="stall", seconds=60) if prompt.startswith(MATCH) and prompt in stalled else OK

    cache, out = tmp_path / "cache", tmp_path / "run"
    with FakeOpenAIServer(reply=reply, script=script) as server:
        argv = [sys.executable, "-m", "privasis_bench", *_run_args(server.base_url, out, cache)]
        proc = subprocess.Popen(argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not stalled:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the matcher was never asked"
            time.sleep(0.05)
        others = lambda: [p for p in server.received if p.startswith(MATCH) and p not in stalled]  # noqa: E731
        while not all(server.served[p] for p in others()):  # the wave's other questions are answered meanwhile
            assert time.monotonic() < deadline, "the matcher's other questions were never answered"
            time.sleep(0.05)
        time.sleep(0.5)  # and their answers reach the cache
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        first = dict(server.served)
        stalled.append("released")  # the stall applies to the first run only
        server.script = lambda prompt, seen: OK
        again = subprocess.run(argv, env=_env(), capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        served = dict(server.served)
    assert first and all(served[p] == 1 for p in served)  # nothing answered twice
    assert sum(1 for p in first if is_model_prompt(p)) == 5
    invocations = json.loads((out / TASK / LEDGER_NAME).read_text())["invocations"]
    resumed = invocations[-1]["usage"]
    assert resumed.get("model", {}).get("requests", 0) == 0 and resumed.get("adversary", {}).get("requests", 0) == 0
    assert resumed["matcher"]["requests"] == sum(1 for p in served if p not in first)
    assert _results(out)["metrics"]["cpr"] == _results(reference_run[0])["metrics"]["cpr"]


def test_evaluate_reads_spias_own_anonymized_rows_and_plain_rows(reference_run, tmp_path, monkeypatch, capsys, key):
    run, _ = reference_run
    official = tmp_path / "anonymized.jsonl"
    with official.open("w", encoding="utf-8") as fh:
        for line in SAMPLE.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            fh.write(json.dumps({**row, "anonymized_text": writer(row["text"])}) + "\n")
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({"id": r["id"], "output": r["output"]}) + "\n" for r in _rows(run)))
    with FakeOpenAIServer(reply=reply) as server:
        for name, preds in (("official", official), ("plain", plain)):
            code, out, err = run_main(["evaluate", "-p", str(preds), "-t", TASK, *_roles(server.base_url), "-o",
                                       str(tmp_path / name), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                                       "--bootstrap-samples", "50"], monkeypatch, capsys)
            assert code == 0, out + err
    expected = _results(run)["metrics"]
    for name in ("official", "plain"):
        got = _results(tmp_path / name)["metrics"]
        assert (got["cpr"], got["ipr"], got["scored_documents"]) == (expected["cpr"], expected["ipr"], 5), name


def test_evaluate_refuses_a_row_of_another_dataset_with_one_line(tmp_path, monkeypatch, capsys, key):
    preds = tmp_path / "anonymized.jsonl"
    preds.write_text(json.dumps({"metadata": {"data_id": "TAB-00000"}, "anonymized_text": "x"}) + "\n")
    code, out, err = run_main(["evaluate", "-p", str(preds), "-t", TASK, "--role", "adversary=identity",
                               "--role", "matcher=identity", "-o", str(tmp_path / "o"), "--no-cache"], monkeypatch, capsys)
    message = (out + err).strip()
    assert code != 0 and f"{preds}:1: anonymized_text: document 'TAB-00000' is not in the task's data" in message
