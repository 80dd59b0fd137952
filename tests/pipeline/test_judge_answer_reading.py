"""Judge answers over real HTTP: wrapped answers read like clean ones, and cached answers survive a port move.

Two local OpenAI-compatible fake servers play the judge (tagged templates, deterministic answers); one wraps
every answer in a think block, a role token and whitespace and sends misleading separate reasoning, as reasoning
models and chat servers do. A third server plays the model under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer, write_tiny_task
from judge_fakes import deterministic_answer, parse_prompt, write_templates
from typer.testing import CliRunner

from privasis_bench.cli import app

TASK = "tiny"


def judge_reply(prompt: str) -> str:
    return deterministic_answer(*parse_prompt(prompt))


def wrapped_reply(prompt: str) -> str:
    return f"  <think>Response 1 is closer, both YES</think>\nassistant\n {judge_reply(prompt)} \n"


def misleading_reasoning(prompt: str) -> str:
    return "response1 YES both 1"


def invoke(*args: str) -> None:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def without_raw(rows: list[dict]) -> list[dict]:
    for row in rows:
        for item in row.get("targets", []) + row.get("keep", []):
            for key in [k for k in item if k.endswith("_raw")]:
                del item[key]
    return rows


def read_run(out: Path) -> tuple[dict, list[dict]]:
    results = json.loads((out / TASK / "results.json").read_text())
    rows = [json.loads(line) for line in (out / TASK / "samples.jsonl").read_text().splitlines()]
    return results, rows


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("judge_reading")
    task = write_tiny_task(root / "task", n=4, name=TASK)
    prompts = write_templates(root / "prompts")
    with FakeOpenAIServer() as model_server, FakeOpenAIServer(reply=judge_reply) as clean, \
            FakeOpenAIServer(reply=wrapped_reply, reasoning=misleading_reasoning) as wrapped:
        def run(out: Path, judge_url: str, cache: Path) -> None:
            invoke("run", "-m", f"openai:fake,base_url={model_server.base_url}", "-t", str(task), "-o", str(out),
                   "--judge", f"openai:judge,base_url={judge_url}", "--judge-prompts", str(prompts),
                   "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "50")

        run(root / "clean", clean.base_url, root / "cache-clean")
        run(root / "wrapped", wrapped.base_url, root / "cache-wrapped")
        yield root, task, prompts, clean, wrapped


def test_wrapped_answers_give_identical_results(setup):
    root, _, _, clean, wrapped = setup
    clean_results, clean_rows = read_run(root / "clean")
    wrapped_results, wrapped_rows = read_run(root / "wrapped")
    assert sum(wrapped.received.values()) > 0 and sum(clean.received.values()) == sum(wrapped.received.values())
    assert without_raw(wrapped_rows) == without_raw(clean_rows)
    assert wrapped_results["metrics"] == clean_results["metrics"]
    assert wrapped_results["counts"] == clean_results["counts"]


def test_raw_answers_are_kept_in_samples(setup):
    root = setup[0]
    _, rows = read_run(root / "wrapped")
    answered = [t for row in rows for t in row.get("targets", []) if t.get("guess_raw") is not None]
    assert answered, "the judge was asked about some target"
    for target in answered:
        assert "<think>" in target["guess_raw"] and "<think>" not in target["guess"]


def test_moving_the_judge_to_another_port_reuses_every_cached_answer(setup):
    root, task, prompts, clean, _ = setup
    predictions = root / "clean" / TASK / "sanitized.jsonl"

    def evaluate(out: Path, judge_url: str, *extra_args: str) -> dict:
        args = ",".join((f"base_url={judge_url}",) + extra_args)
        invoke("evaluate", "-p", str(predictions), "-t", str(task), "-o", str(out), "--judge", f"openai:judge,{args}",
               "--judge-prompts", str(prompts), "--cache-dir", str(root / "cache-clean"), "--no-progress",
               "--bootstrap-samples", "50")
        return read_run(out)[0]

    with FakeOpenAIServer(reply=judge_reply) as moved:
        assert moved.base_url != clean.base_url
        results = evaluate(root / "moved", moved.base_url, "timeout=30")
        assert sum(moved.received.values()) == 0, "no judge call after a port move"
        assert results["judge_calls"]["guess_original_computed"] == 0
        assert results["judge_calls"]["guess_original_reused"] > 0
        assert results["metrics"] == read_run(root / "clean")[0]["metrics"]

        # an explicit namespace keeps a different deployment of the same model name apart
        evaluate(root / "namespaced", moved.base_url, "cache_namespace=staging")
        assert sum(moved.received.values()) > 0
