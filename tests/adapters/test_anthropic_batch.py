"""Anthropic Message Batches through the official ``anthropic`` SDK against the local fake: a batched run equals the
live run byte for byte, an expired half goes out again, and a run killed right after the batch was created (its id
never written down) finds it again by its tag instead of paying twice, its spend ledger counting each request
once."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from cli_main import run_main
from fake_batch_server import FakeBatchServer, KillAt
from fake_openai_server import write_tiny_task

pytest.importorskip("anthropic")

REPO = Path(__file__).resolve().parents[2]
FAST = ["--batch-quiet", "0.3", "--batch-poll", "0.05", "--batch-max-wait", "5"]


def _args(server: FakeBatchServer, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "--model", "anthropic:fake-claude", "--model-args", f"base_url={server.root_url}", "--tasks",
            str(yaml), "--judge", "anthropic:fake-judge", "--judge-args", f"base_url={server.root_url}", "--output",
            str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20", "--max-off-label",
            "100000", "--retry-base-delay", "0.01", *extra]


def test_batched_run_equals_the_live_run(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    with FakeBatchServer() as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "live", tmp_path / "c1"), monkeypatch, capsys)
        assert code == 0, so + se
        live = server.live_calls
        code, so, se = run_main(_args(server, yaml, tmp_path / "batch", tmp_path / "c2", "--batch", "model,judge", *FAST),
                                monkeypatch, capsys)
        assert code == 0, so + se
        assert server.live_calls == live and 2 <= len(server.batches) <= 5
        assert set(server.paid.values()) == {2}
    for name in ("samples.jsonl", "sanitized.jsonl"):
        assert (tmp_path / "batch" / "tiny" / name).read_bytes() == (tmp_path / "live" / "tiny" / name).read_bytes()


def test_expired_requests_go_to_the_next_batch(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    with FakeBatchServer(expire={1}) as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "out", tmp_path / "c", "--batch", "model", *FAST),
                                monkeypatch, capsys)
        assert code == 0, so + se
        assert set(server.paid.values()) == {1}
        first = min(server.batches.values(), key=lambda b: b["_order"])
        assert first["request_counts"]["expired"] == 2


@pytest.mark.parametrize("event", ["create", "created", "poll", "content_sent"])  # before, after submit, polling,
# while writing answers
def test_killed_after_submit_is_collected_not_paid_again(tmp_path: Path, event: str, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=3)
    out, cache = tmp_path / "out", tmp_path / "cache"
    kill = KillAt(event)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with FakeBatchServer(on_event=kill) as server:
        command = [sys.executable, "-m", "privasis_bench", *_args(server, yaml, out, cache, "--batch", "model,judge", *FAST)]
        kill.run(command, env)
        code, so, se = run_main(command[3:], monkeypatch, capsys)  # the re-run: in this process (nothing to kill)
        assert code == 0, so + se
        server.settle()
        assert server.paid and set(server.paid.values()) == {1}
    results = json.loads((out / "tiny" / "results.json").read_text())
    assert results["checks"]["passed"]
    roles = results["usage_cumulative"]["total"]["usage"].values()  # the killed run's entry and this one's
    assert {k: sum(r[k] for r in roles) for k in ("requests", "prompt_tokens", "completion_tokens")} == {
        "requests": sum(server.paid.values()), **server.billed}


def test_errored_requests_are_retried_or_recorded(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=3)
    fails = lambda prompt, n: (500 if n == 0 else None) if "Person0 " in prompt else (400 if "Person1 " in prompt else None)  # noqa: E731
    with FakeBatchServer(request_error=fails, cancel={2}) as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "out", tmp_path / "c", "--batch", "model", *FAST),
                                monkeypatch, capsys)
    assert code == 1, so + se  # the 400 (invalid_request_error) is a recorded failure
    outputs = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "out" / "tiny" / "sanitized.jsonl").read_text().splitlines()}
    assert outputs["r000"]["error"] is None and outputs["r000"]["attempts"] >= 2  # api_error: asked again
    assert outputs["r001"]["output"] is None and "invalid_request_error" in outputs["r001"]["error"]
    assert outputs["r002"]["error"] is None


def test_a_batch_refused_as_too_large_is_split_and_a_request_refused_alone_is_a_recorded_failure(
        tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=5)
    too_big = lambda prompts: len(prompts) > 2  # noqa: E731 - the create is answered HTTP 413 request_too_large
    with FakeBatchServer(refuse=too_big) as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "out", tmp_path / "c", "--batch", "model", *FAST),
                                monkeypatch, capsys)
        assert code == 0, so + se
    assert server.refused == [5, 3]  # 5 -> 3 + 2, and the 3 -> 2 + 1: nothing was created for those
    assert sorted(len(b["_requests"]) for b in server.batches.values()) == [1, 2, 2]
    assert set(server.paid.values()) == {1}
    usage = json.loads((tmp_path / "out" / "tiny" / "results.json").read_text())["usage"]["model"]
    assert usage["requests"] == usage["batched_requests"] == 5

    poisoned = lambda prompts: any("Person1 " in p for p in prompts)  # noqa: E731
    with FakeBatchServer(refuse=poisoned) as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "out2", tmp_path / "c2", "--batch", "model", *FAST),
                                monkeypatch, capsys)
    assert code == 1, so + se
    assert server.refused == [5, 3, 2, 1]  # isolated by halving, then a recorded failure (413 is not retried)
    outputs = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "out2" / "tiny" / "sanitized.jsonl").read_text().splitlines()}
    assert outputs["r001"]["output"] is None and "request_too_large" in outputs["r001"]["error"]
    assert all(outputs[r]["error"] is None for r in ("r000", "r002", "r003", "r004"))
    assert not any("Person1 " in p for p in server.paid) and set(server.paid.values()) == {1}


def test_finding_an_untagged_batch_leaves_out_the_ids_the_cache_recorded(monkeypatch) -> None:
    """Message Batches carry no tag: a lost batch is found by its time and size, never taken for a recorded one (two
    batches of the same size would otherwise be confused, and one's answers stored for the other's requests)."""
    from privasis_bench.adapters.anthropic_adapter import AnthropicAdapter
    from privasis_bench.adapters.anthropic_batch import AnthropicBatchClient
    from privasis_bench.adapters.base import ChatRequest

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeBatchServer() as server:
        client = AnthropicBatchClient(AnthropicAdapter("fake-claude", base_url=server.root_url))
        lines = [client.line(f"r{i}", ChatRequest.user(f"q{i}", max_tokens=8)) for i in range(2)]
        tag = f"pb-{int(time.time())}-2-abc"
        first = client.submit(lines, tag)
        assert client.find(tag) == first
        second = client.submit(lines, tag)
        assert client.find(tag) is None  # two candidates: not guessed
        assert client.find(tag, frozenset({first})) == second
        assert client.find(tag, frozenset({first, second})) is None


def test_a_server_without_message_batches_is_one_line_at_start(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=2)
    with FakeBatchServer(batches=False) as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "out", tmp_path / "c", "--batch", "judge", *FAST),
                                monkeypatch, capsys)
        assert server.live_calls == 0  # not even the model ran: the judge's check comes first
    assert code == 2 and "offers no message batches" in se and len(se.strip().splitlines()) == 1, se
    assert not (tmp_path / "out" / "tiny").exists()
