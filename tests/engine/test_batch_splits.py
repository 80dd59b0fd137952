"""A batch the provider refuses or fails as a whole is split, not just retried: against the OpenAI-compatible fake
(through the official ``openai`` SDK), a batch that ends ``failed`` (a queued-token limit on batches of more than two
requests, sent again whole once and then halved; or one invalid request, halved at once) is split down to single
requests; everything that can be answered
is answered and paid once, and a request refused on its own is a recorded failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_batch_server import FakeBatchServer
from fake_openai_server import write_tiny_task

pytest.importorskip("openai")

FAST = ["--batch-quiet", "0.3", "--batch-poll", "0.05", "--batch-max-wait", "5", "--retry-base-delay", "0.01"]


def _run(server: FakeBatchServer, yaml: Path, out: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    return run_main(
        ["run", "--model", "openai:fake-model", "--model-args", f"base_url={server.base_url}", "--tasks", str(yaml),
         "--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}", "--output", str(out),
         "--cache-dir", str(out / "cache"), "--no-progress", "--bootstrap-samples", "20", "--max-off-label", "100000",
         "--batch", "model", *FAST], monkeypatch, capsys)


def _outputs(out: Path) -> dict[str, dict]:
    return {json.loads(x)["id"]: json.loads(x) for x in (out / "tiny" / "sanitized.jsonl").read_text().splitlines()}


def _model_batches(server: FakeBatchServer) -> list[dict]:
    return sorted((b for b in server.batches.values() if b.get("_kind") != "anthropic"), key=lambda b: b["_order"])


def test_a_batch_over_the_providers_limit_is_halved_until_it_fits(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=5)
    too_big = lambda prompts: "token_limit_exceeded" if len(prompts) > 2 else None  # noqa: E731
    with FakeBatchServer(refuse=too_big) as server:
        code, so, se = _run(server, yaml, tmp_path / "out", monkeypatch, capsys)
        assert code == 0, so + se
        batches = _model_batches(server)
    # a queued-token limit may clear: each refused batch is sent again whole once (after the back-off), then halved:
    # 5, 5 again -> 3 + 2, the 3 twice -> 2 + 1
    assert server.refused == [5, 5, 3, 3]
    assert sorted(b["request_counts"]["total"] for b in batches if b["status"] == "completed") == [1, 2, 2]
    assert [b["status"] for b in batches].count("failed") == 4
    assert set(server.paid.values()) == {1}  # every request answered, and paid, once
    assert all(o["error"] is None for o in _outputs(tmp_path / "out").values())
    results = json.loads((tmp_path / "out" / "tiny" / "results.json").read_text())
    assert results["checks"]["passed"]
    assert results["usage"]["model"]["requests"] == results["usage"]["model"]["batched_requests"] == 5  # once each


def test_a_request_refused_on_its_own_is_a_recorded_failure_and_the_rest_answered(tmp_path: Path, monkeypatch,
                                                                                  capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    poisoned = lambda prompts: "invalid_request" if any("Person1 " in p for p in prompts) else None  # noqa: E731
    with FakeBatchServer(refuse=poisoned) as server:
        code, so, se = _run(server, yaml, tmp_path / "out", monkeypatch, capsys)
    assert code == 1, so + se  # the run is incomplete and says so
    assert server.refused == [4, 2, 1]  # isolated in two halvings, then given up (not retried: a 400)
    outputs = _outputs(tmp_path / "out")
    assert outputs["r001"]["output"] is None and "invalid_request" in outputs["r001"]["error"]
    assert all(outputs[r]["error"] is None for r in ("r000", "r002", "r003"))
    model_paid = {p: n for p, n in server.paid.items() if "Person" in p and n}
    assert not any("Person1 " in p for p in server.paid) and set(server.paid.values()) == {1}, model_paid
