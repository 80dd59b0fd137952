"""Nothing is paid twice: a ``run --batch model,judge`` killed (SIGKILL) at each point of a batch's life, then run
again, collects what was in flight instead of submitting it again. The fake provider counts every request it
answers and the tokens it bills; after the second run every prompt was answered exactly once, the run is complete,
and the spend ledger summed over both invocations (the killed one included) says exactly what the provider billed:
each batched request counted once, by the run that learnt its batch exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_batch_server import FakeBatchServer, KillAt
from fake_openai_server import write_tiny_task

pytest.importorskip("openai")

REPO = Path(__file__).resolve().parents[2]


def _command(server: FakeBatchServer, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "privasis_bench", "run", "--model", "openai:fake-model", "--model-args",
            f"base_url={server.base_url}", "--tasks", str(yaml), "--judge", "openai:fake-judge", "--judge-args",
            f"base_url={server.base_url}", "--output", str(out), "--cache-dir", str(cache), "--no-progress",
            "--bootstrap-samples", "20", "--max-off-label", "100000", "--batch", "model,judge", "--batch-quiet", "0.3",
            "--batch-poll", "0.05", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.mark.parametrize("event,nth,latency", [
    ("upload", 1, 0.0),        # before submit: the batch row is written, the provider has nothing yet
    ("created", 1, 0.0),       # after submit: the batch exists but its id never reached the cache
    ("poll", 1, 0.0),          # during polling (the batch is answered at that very poll)
    ("poll", 1, 1.0),          # during polling, the batch still in progress: the next run waits for it
    ("content_sent", 1, 0.0),  # while writing answers: the results were downloaded
    ("created", 2, 0.0),       # the judge's first wave
    ("poll", 4, 0.0),
])
def test_killed_at_each_point_then_resumed_pays_each_request_once(tmp_path: Path, event: str, nth: int,
                                                                   latency: float) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    kill = KillAt(event, nth)
    with FakeBatchServer(on_event=kill, latency=latency) as server:
        kill.run(_command(server, yaml, out, cache), _env())
        again = subprocess.run(_command(server, yaml, out, cache), env=_env(), capture_output=True, text=True,
                               timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        server.settle()  # a batch left behind would still be run and billed
        assert server.paid and set(server.paid.values()) == {1}, server.paid.values()
        assert server.seen == server.paid
        billed = {"requests": sum(server.paid.values()), **server.billed}
    rows = [json.loads(x) for x in (out / "tiny" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 4
    results = json.loads((out / "tiny" / "results.json").read_text())
    assert results["checks"]["passed"]
    assert ledger_spend(results) == billed


def ledger_spend(results: dict) -> dict[str, int]:
    """Requests and tokens the spend ledger records over every invocation (killed ones included), all roles."""
    cumulative = results["usage_cumulative"]
    assert cumulative["total"]["invocations"] == 2 and cumulative["total"]["killed_invocations"] == 1
    roles = cumulative["total"]["usage"].values()
    spent = {k: sum(row[k] for row in roles) for k in ("requests", "prompt_tokens", "completion_tokens")}
    assert spent["requests"] == sum(row["batched_requests"] for row in roles)  # all of it went in batches
    return spent
