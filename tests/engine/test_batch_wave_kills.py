"""Nothing is paid twice when a wave goes out as several batches (issue 51, item 5): ``--batch-size 3`` splits each
wave of nine requests into three batches; the run is killed (SIGKILL) at each batch's creation, before and after the
provider answers, then run again. On the OpenAI and the Anthropic fake (which keeps no tag on a batch, so an
unrecorded batch is found again only by its time and size), every prompt is answered exactly once and the spend ledger
over both invocations equals what the provider billed. A SIGTERM at a batch's creation ends the run at once with the
ledger exact too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fake_batch_server import FakeBatchServer, KillAt
from fake_openai_server import write_tiny_task

pytest.importorskip("openai")
pytest.importorskip("anthropic")

REPO = Path(__file__).resolve().parents[2]
RECORDS, SIZE = 9, 3  # three batches per wave: the model's, then each judge tier's


def _command(provider: str, server: FakeBatchServer, yaml: Path, out: Path, cache: Path) -> list[str]:
    url = server.base_url if provider == "openai" else server.root_url
    return [sys.executable, "-m", "privasis_bench", "run", "--model", f"{provider}:fake-model", "--model-args",
            f"base_url={url}", "--tasks", str(yaml), "--judge", f"{provider}:fake-judge", "--judge-args",
            f"base_url={url}", "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples",
            "20", "--max-off-label", "100000", "--retry-base-delay", "0.01", "--batch", "model,judge", "--batch-size",
            str(SIZE), "--batch-quiet", "0.3", "--batch-poll", "0.05", "--batch-max-wait", "5"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _resume_and_check(provider: str, server: FakeBatchServer, yaml: Path, out: Path, cache: Path,
                      first_ended: str) -> None:
    again = subprocess.run(_command(provider, server, yaml, out, cache), env=_env(), capture_output=True, text=True,
                           timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    server.settle()  # a batch left behind would still be run and billed
    assert server.paid and set(server.paid.values()) == {1}, dict(server.paid)  # each prompt answered once
    billed = {"requests": sum(server.paid.values()), **server.billed}
    results = json.loads((out / "tiny" / "results.json").read_text())
    assert results["checks"]["passed"]
    ledger = json.loads((out / "tiny" / "usage.json").read_text())["invocations"]
    assert [e["ended"] for e in ledger] == [first_ended, "completed"]
    roles = results["usage_cumulative"]["total"]["usage"].values()
    spent = {k: sum(row[k] for row in roles) for k in ("requests", "prompt_tokens", "completion_tokens")}
    assert spent == billed


# Events 1-3 are the model's wave, 4-6 the judge's first wave; "create" is the request that creates a batch (the
# provider has nothing yet), "created" the moment after the provider created it (its id never reaches the run).
POINTS = [("created", n) for n in range(1, 7)] + [("create", n) for n in (2, 5, 6)]


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("event,nth", POINTS)
def test_killed_at_every_batch_boundary_of_a_wave_pays_each_request_once(tmp_path: Path, provider: str, event: str,
                                                                          nth: int) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=RECORDS)
    out, cache = tmp_path / "out", tmp_path / "cache"
    kill = KillAt(event, nth)
    with FakeBatchServer(on_event=kill) as server:
        kill.run(_command(provider, server, yaml, out, cache), _env())
        _resume_and_check(provider, server, yaml, out, cache, "killed")


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_sigterm_at_a_batch_creation_leaves_the_ledger_exact(tmp_path: Path, provider: str) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=RECORDS)
    out, cache = tmp_path / "out", tmp_path / "cache"
    kill = KillAt("created", 5, sig=signal.SIGTERM)
    with FakeBatchServer(on_event=kill) as server:
        output = kill.run(_command(provider, server, yaml, out, cache), _env())
        assert kill.proc is not None and kill.proc.returncode == 130, output
        assert "interrupted: finished work is saved" in output and "Traceback" not in output, output
        _resume_and_check(provider, server, yaml, out, cache, "interrupted")
