"""A task family that lives only in the test tree (tests/toy_family), registered by one line, runs through the same
commands as the built-in families: run (its attacker role asked through a local server), run --plan, --batch
attacker, evaluate, rescore, compare; its results.json follows the schema the family keeps in its own package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import FakeOpenAIServer

from privasis_bench.tasks.family import FAMILIES
from tests.toy_family.family import TASK


@pytest.fixture
def toy():
    FAMILIES.register("toy", "tests.toy_family.family:FAMILY")  # the one line a family needs
    yield
    FAMILIES.unregister("toy")


def rewrite(prompt: str) -> str:
    """The model under test: hides the city of every note but the one in Bergen; the attacker: names Bergen
    when the note says it, else guesses Oslo."""
    if prompt.startswith("Which city"):
        return "Bergen" if "Bergen" in prompt else "Oslo"
    note = prompt.split("Text to rewrite:\n", 1)[1].split("\n\n###", 1)[0]
    for city in ("Lisbon", "Tampere", "Ghent"):
        note = note.replace(city, "a city")
    return note


def _run(tmp_path: Path, server: FakeOpenAIServer, monkeypatch, capsys, *extra: str, out: str = "run"):
    return run_main(["run", "-m", f"openai:writer,base_url={server.base_url}", "-t", TASK,
                     "--role", f"attacker=openai:guesser,base_url={server.base_url}", "-o", str(tmp_path / out),
                     "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra], monkeypatch, capsys)


def _results(path: Path) -> dict:
    return json.loads((path / "toy_cities" / "results.json").read_text())


def test_a_registered_family_runs_asks_its_role_and_rescores(toy, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(reply=rewrite) as server:
        code, out, err = _run(tmp_path, server, monkeypatch, capsys)
        assert code == 0, out + err
        asked = sum(n for prompt, n in server.received.items() if prompt.startswith("Which city"))
    res = _results(tmp_path / "run")
    assert res["metrics"]["protected"] == 0.75 and res["metrics"]["scored_documents"] == 4
    assert res["scorer"]["name"] == "toy" and res["complete"] and asked == 4
    assert set(res["usage"]) >= {"model", "attacker"}  # each role's calls are on record
    rows = [json.loads(line) for line in (tmp_path / "run" / "toy_cities" / "samples.jsonl").read_text().splitlines()]
    assert {r["id"]: r["protected"] for r in rows} == {"n1": True, "n2": True, "n3": True, "n4": False}
    code, out, err = run_main(["rescore", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0 and "match" in out, out + err
    code, out, err = run_main(["compare", str(tmp_path / "run"), str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0, out + err


def test_a_missing_role_and_an_undeclared_role_are_one_line_each(toy, tmp_path, monkeypatch, capsys):
    code, out, err = run_main(["run", "-m", "identity", "-t", TASK, "-o", str(tmp_path / "o")],
                              monkeypatch, capsys)
    assert code == 2 and "asks the attacker role: pass --role attacker=" in out + err
    code, out, err = run_main(["run", "-m", "identity", "-t", TASK, "-o", str(tmp_path / "o"),
                               "--role", "grader=identity"], monkeypatch, capsys)
    assert code == 2 and "--role grader: no task of this command asks that role" in out + err


def test_the_plan_counts_the_model_and_the_attacker(toy, tmp_path, monkeypatch, capsys):
    code, out, err = run_main(["run", "-m", "openai:writer", "-t", TASK, "--role", "attacker=openai:guesser",
                               "-o", str(tmp_path / "o"), "--plan", "--no-cache"], monkeypatch, capsys)
    assert code == 0, out + err
    assert "model openai:writer: 4 requests" in out and "attacker openai:guesser: at most 4 requests" in out
    assert not (tmp_path / "o").exists()


def test_evaluate_scores_saved_predictions_with_the_attacker(toy, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({"n1": "Someone bakes in Lisbon.", "n2": "Someone teaches violin."}))
    with FakeOpenAIServer(reply=rewrite) as server:
        code, out, err = run_main(["evaluate", "-p", str(preds), "-t", TASK, "-o", str(tmp_path / "ev"),
                                   "--role", f"attacker=openai:guesser,base_url={server.base_url}", "--no-progress",
                                   "--cache-dir", str(tmp_path / "cache")], monkeypatch, capsys)
    assert code == 0, out + err
    res = _results(tmp_path / "ev")
    assert res["metrics"]["scored_documents"] == 2 and res["metrics"]["protected"] == 1.0


def test_batch_takes_the_family_role(toy, tmp_path, monkeypatch, capsys):
    pytest.importorskip("openai")
    from fake_batch_server import FakeBatchServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeBatchServer(reply=rewrite) as server:
        code, out, err = _run(tmp_path, server, monkeypatch, capsys, "--batch", "attacker", "--batch-quiet", "0.2",
                              "--batch-poll", "0.05", "--batch-max-wait", "5")
        assert code == 0, out + err
        assert server.batches and server.live_calls == 4  # the model's rewrites live, the attacker's in a batch
    res = _results(tmp_path / "run")
    assert res["metrics"]["protected"] == 0.75
    assert res["usage"]["attacker"]["batched_requests"] == 4


def test_the_run_record_is_checked_against_the_familys_own_schema(toy):
    from privasis_bench.results.record import record_problems

    good = {"task": {}, "scorer": {"name": "toy", "attacker": "x"}, "dataset": {}, "model": {}, "counts": {},
            "metrics": {"scorer": "toy", "protected": 0.5, "scored_documents": 2}, "checks": {}, "complete": True}
    assert record_problems(good, "toy", "results.json") == []
    bad = {**good, "scorer": {"name": "toy"}, "metrics": {**good["metrics"], "protected": 1.5}}
    assert record_problems(bad, "toy", "results.json") == [
        "results.json: metrics.protected: 1.5 is greater than the maximum of 1 (schema toy-results-1)",
        "results.json: scorer: 'attacker' is a required property (schema toy-results-1)"]


def test_sanitize_writes_the_familys_rewrites(toy, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(reply=rewrite) as server:
        code, out, err = run_main(["sanitize", "-m", f"openai:writer,base_url={server.base_url}", "-t", TASK,
                                   "-o", str(tmp_path / "s"), "--no-cache", "--no-progress"], monkeypatch, capsys)
    assert code == 0, out + err
    lines = [json.loads(x) for x in (tmp_path / "s" / "toy_cities" / "sanitized.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and "Lisbon" not in lines[0]["output"]



def test_a_tab_plan_costs_the_model_rewrites(tmp_path, monkeypatch, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:writer: {input: 1.0, output: 2.0}\n")
    code, out, err = run_main(["run", "-m", "openai:writer", "-t", "tab_sample", "-o", str(tmp_path / "o"), "--plan",
                               "--no-cache", "--prices", str(prices)], monkeypatch, capsys)
    assert code == 0, out + err
    assert "plan for tab_sample (10 records" in out and "model openai:writer: 10 requests" in out
    assert "about 2,760 prompt tokens, at most 10,240 output tokens; cost live 0.0232" in out  # 2,760 x 1 + 10,240 x 2 per 1M


def test_judge_is_the_judge_roles_alias(tmp_path, monkeypatch, capsys):
    code, out, err = run_main(["run", "-m", "identity", "-t", "privasis_sample", "-o", str(tmp_path / "o"),
                               "--judge", "openai:a", "--role", "judge=openai:b"], monkeypatch, capsys)
    assert code == 2 and "--judge and --role judge=... name two judges" in out + err
    code, out, err = run_main(["run", "-m", "identity", "-t", "privasis_sample", "-o", str(tmp_path / "o"), "--limit", "3",
                               "--role", "judge=none", "--no-progress", "--no-cache"], monkeypatch, capsys)
    res = json.loads((tmp_path / "o" / "privasis_sample" / "results.json").read_text())
    assert res["judge"]["mode"] == "none", out + err
