"""Provider batches end to end (``run --batch model,judge``) against the OpenAI-compatible fake with Files + Batches,
driven through the official ``openai`` SDK: byte-identical results to the live run, waves, detach and collect, and
every provider outcome (expiry, per-request errors, malformed and missing result files, no batch endpoints)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_main import run_main
from fake_batch_server import FakeBatchServer
from fake_openai_server import write_tiny_task

pytest.importorskip("openai")

FAST = ["--batch-quiet", "0.2", "--batch-poll", "0.05", "--batch-max-wait", "5"]


def _run(server: FakeBatchServer, yaml: Path, out: Path, cache: Path, monkeypatch, capsys, *extra: str):
    return run_main(
        ["run", "--model", "openai:fake-model", "--model-args", f"base_url={server.base_url}", "--tasks", str(yaml),
         "--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}", "--output", str(out),
         "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20", "--max-off-label", "100000",
         "--retry-base-delay", "0.01", *extra], monkeypatch, capsys)


def _results(out: Path) -> dict:
    data = json.loads((out / "tiny" / "results.json").read_text())
    return {k: data[k] for k in ("metrics", "counts") if k in data}


def test_batched_run_is_byte_identical_to_the_live_run(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=6)
    with FakeBatchServer() as server:
        code, so, se = _run(server, yaml, tmp_path / "live", tmp_path / "c1", monkeypatch, capsys)
        assert code == 0, so + se
        live_calls = server.live_calls
        assert live_calls > 6 and not server.batches
        code, so, se = _run(server, yaml, tmp_path / "batch", tmp_path / "c2", monkeypatch, capsys,
                            "--batch", "model", "--batch", "judge", *FAST)
        assert code == 0, so + se
        assert server.live_calls == live_calls  # nothing went live
    for name in ("samples.jsonl", "sanitized.jsonl"):
        assert (tmp_path / "batch" / "tiny" / name).read_bytes() == (tmp_path / "live" / "tiny" / name).read_bytes(), name
    # the checkpoint is appended in the order verdicts complete (as in any concurrent live run): same lines
    lines = [sorted((tmp_path / d / "tiny" / "judged.jsonl").read_text().splitlines()) for d in ("batch", "live")]
    assert lines[0] == lines[1]
    assert _results(tmp_path / "batch") == _results(tmp_path / "live")
    # the model's outputs are one wave, the judge's tiers the next ones: a handful of batches, not one per record
    assert 2 <= len(server.batches) <= 5
    # every request paid exactly once by each run (the live one, then the batched one)
    assert set(server.paid.values()) == {2} and sum(server.paid.values()) == 2 * live_calls
    # a second run is answered from the cache: no batch, no call
    with FakeBatchServer() as again:
        code, so, se = _run(again, yaml, tmp_path / "batch", tmp_path / "c2", monkeypatch, capsys,
                            "--batch", "model,judge", *FAST)
        assert code == 0 and not again.batches and again.live_calls == 0, so + se
