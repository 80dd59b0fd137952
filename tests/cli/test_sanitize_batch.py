"""``sanitize --batch model`` against the OpenAI-compatible fake (Files + Batches) and the Anthropic fake (Message
Batches), through the official SDKs: byte-identical outputs to the same sanitize made live, spend recorded as
batched in the ledger, detach and collect, a SIGKILL at each point of a batch's life paying nothing twice, and
``--plan`` (no call). ``--batch judge`` is refused: sanitize has no judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_main import run_main
from fake_batch_server import FakeBatchServer, KillAt
from fake_openai_server import write_tiny_task

pytest.importorskip("openai")

REPO = Path(__file__).resolve().parents[2]
FAST = ["--batch-quiet", "0.2", "--batch-poll", "0.05", "--batch-max-wait", "5"]
PROVIDERS = {"openai": ("openai:fake-model", "base_url"), "anthropic": ("anthropic:fake-claude", "root_url")}


def _args(server: FakeBatchServer, yaml: Path, out: Path, cache: Path, *extra: str, provider: str = "openai") -> list[str]:
    model, url = PROVIDERS[provider]
    return ["sanitize", "--model", model, "--model-args", f"base_url={getattr(server, url)}", "--tasks", str(yaml),
            "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--retry-base-delay", "0.01", *extra]


def _outputs(out: Path) -> bytes:
    return (out / "tiny" / "sanitized.jsonl").read_bytes()


def _spent(out: Path) -> dict:
    """The model's spend in this task directory's ledger, summed over every invocation."""
    total: dict = {}
    for entry in json.loads((out / "tiny" / "usage.json").read_text())["invocations"]:
        for key, value in entry["usage"].get("model", {}).items():
            total[key] = total.get(key, 0) + value
    return total


def _tokens_recorded_once(out: Path) -> None:
    """The ledger, summed over every invocation, records as batched exactly the requests and tokens of the outputs."""
    rows = [json.loads(x) for x in _outputs(out).decode().splitlines()]
    spent = _spent(out)
    for kind in ("prompt_tokens", "completion_tokens"):
        assert spent[f"batched_{kind}"] == spent[kind] == sum(r["usage"][kind] for r in rows) > 0, kind
    assert spent["batched_requests"] == spent["requests"] == len(rows)  # each request counted once over invocations


def _live_outputs(tmp_path: Path, yaml: Path, provider: str, monkeypatch, capsys) -> bytes:
    """The same sanitize made live, against its own fake (nothing shared with the batched run)."""
    with FakeBatchServer() as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "live", tmp_path / "c-live", provider=provider),
                                monkeypatch, capsys)
        assert code == 0 and server.live_calls == 4 and not server.batches, so + se
    return _outputs(tmp_path / "live")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batched_sanitize_is_byte_identical_to_the_live_one(tmp_path: Path, monkeypatch, capsys, provider: str) -> None:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
    yaml = write_tiny_task(tmp_path / "task", n=4)
    live = _live_outputs(tmp_path, yaml, provider, monkeypatch, capsys)
    with FakeBatchServer() as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "batch", tmp_path / "c", "--batch", "model", *FAST,
                                      provider=provider), monkeypatch, capsys)
        assert code == 0, so + se
        assert server.live_calls == 0 and len(server.batches) == 1  # one wave, one batch, nothing live
        assert set(server.paid.values()) == {1} and len(server.paid) == 4
        assert "1 provider batch(es) submitted" in so and "4 requests batched" in so
    assert _outputs(tmp_path / "batch") == live
    live_meta = (tmp_path / "live" / "tiny" / "sanitized.jsonl.meta.json").read_bytes()
    assert (tmp_path / "batch" / "tiny" / "sanitized.jsonl.meta.json").read_bytes() == live_meta
    spent = _spent(tmp_path / "batch")  # recorded as batched spend, as `run` records it
    assert spent["batched_requests"] == spent["requests"] == 4
    assert spent["batched_prompt_tokens"] == spent["prompt_tokens"] > 0
    assert spent["batched_completion_tokens"] == spent["completion_tokens"] > 0
    assert "batched_requests" not in _spent(tmp_path / "live")
    with FakeBatchServer() as again:  # a second run: the output file and the cache answer, no batch, no call
        code, so, se = run_main(_args(again, yaml, tmp_path / "batch", tmp_path / "c", "--batch", "model", *FAST,
                                      provider=provider), monkeypatch, capsys)
        assert code == 0 and not again.batches and again.live_calls == 0 and not again.paid, so + se
    assert _outputs(tmp_path / "batch") == live


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_detached_sanitize_is_collected_by_the_same_command(tmp_path: Path, monkeypatch, capsys, provider: str) -> None:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
    yaml = write_tiny_task(tmp_path / "task", n=4)
    live = _live_outputs(tmp_path, yaml, provider, monkeypatch, capsys)
    command = ("--batch", "model", *FAST)
    with FakeBatchServer(latency=60.0) as server:
        code, so, se = run_main(_args(server, yaml, tmp_path / "out", tmp_path / "c", *command, "--batch-detach",
                                      provider=provider), monkeypatch, capsys)
        assert code == 0, so + se
        assert "1 batch(es) submitted and pending" in se and "run the same command again" in se
        assert len(server.batches) == 1 and not server.paid
        server.latency = 0.0
        code, so, se = run_main(_args(server, yaml, tmp_path / "out", tmp_path / "c", *command, provider=provider),
                                monkeypatch, capsys)
        assert code == 0, so + se
        assert "0 provider batch(es) submitted, 1 collected from an earlier run" in so
        assert len(server.batches) == 1 and server.live_calls == 0  # collected, not submitted again
        assert set(server.paid.values()) == {1} and len(server.paid) == 4
    assert _outputs(tmp_path / "out") == live
    _tokens_recorded_once(tmp_path / "out")


@pytest.mark.parametrize("provider,event", [
    ("openai", "upload"),        # before submit: the batch row is written, the provider has nothing yet
    ("openai", "created"),       # after submit: the batch exists, its id never reached the cache
    ("openai", "poll"),          # during polling (the batch is answered at that very poll)
    ("openai", "content_sent"),  # while writing answers: the results were downloaded
    ("anthropic", "created"),    # found again by the creation time and request count in its tag
    ("anthropic", "content_sent"),
])
def test_killed_sanitize_resumes_paying_each_request_once(tmp_path: Path, provider: str, event: str) -> None:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    kill = KillAt(event)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with FakeBatchServer(on_event=kill) as server:
        command = [sys.executable, "-m", "privasis_bench",
                   *_args(server, yaml, out, cache, "--batch", "model", *FAST, provider=provider)]
        kill.run(command, env)
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        server.settle()  # a batch left behind would still be run and billed
        assert len(server.paid) == 4 and set(server.paid.values()) == {1}, server.paid.values()
        assert server.seen == server.paid and server.live_calls == 0
    rows = [json.loads(x) for x in _outputs(out).decode().splitlines()]
    assert [r["id"] for r in rows] == ["r000", "r001", "r002", "r003"] and all(r["error"] is None for r in rows)
    _tokens_recorded_once(out)


def test_batch_judge_and_bad_batch_options_are_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=2)
    base = ["sanitize", "--model", "identity", "--tasks", str(yaml), "--no-progress", "--cache-dir", str(tmp_path / "cid")]
    no_judge = "--batch judge: sanitize has no judge (it only asks the model under test); use --batch model"
    for extra, needle in ((["--batch", "judge"], no_judge), (["--batch", "model,judge"], no_judge),
                          (["--batch", "sanitizer"], "--batch takes model and/or judge"),
                          (["--batch-detach"], "--batch-detach needs --batch"),
                          (["--batch", "model"], "has no batch interface"),
                          (["--prices", str(yaml)], "--prices is read by --plan only")):
        out = tmp_path / f"o{len(list(tmp_path.iterdir()))}"
        code, so, se = run_main([*base, "--output", str(out), *extra], monkeypatch, capsys)
        assert code == 2 and needle in se and len(se.strip().splitlines()) == 1, (extra, se)
        assert "Traceback" not in se and not out.exists()
    with FakeBatchServer(batches=False) as server:  # a base_url without batch endpoints: said at start
        code, so, se = run_main(_args(server, yaml, tmp_path / "nb", tmp_path / "c", "--batch", "model", *FAST),
                                monkeypatch, capsys)
        assert server.live_calls == 0 and not (tmp_path / "nb").exists()
    assert code == 2 and "offers no batch endpoints" in se and len(se.strip().splitlines()) == 1
    with FakeBatchServer() as server:  # batches need the response cache (it keeps the batches in flight)
        code, so, se = run_main(_args(server, yaml, tmp_path / "nc", tmp_path / "c", "--batch", "model", "--no-cache"),
                                monkeypatch, capsys)
        assert not server.http_calls and not (tmp_path / "nc").exists()
    assert code == 2 and "drop --no-cache" in se and len(se.strip().splitlines()) == 1


def test_plan_counts_the_model_requests_and_makes_no_call(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:fake-model:\n  input: 2.0\n  output: 8.0\n  batch_discount: 0.5\n")
    out, cache = tmp_path / "out", tmp_path / "cache"
    with FakeBatchServer() as server:
        code, so, se = run_main(_args(server, yaml, out, cache, "--plan", "--prices", str(prices)), monkeypatch, capsys)
        assert code == 0, so + se
        assert not server.http_calls and not out.exists()  # no call, nothing written
        assert "model openai:fake-model: 4 requests (0 already answered)" in so and "judge" not in so
        live = float(so.split("live ")[1].split(",")[0])
        assert float(so.split("batched ")[1].split()[0]) == pytest.approx(live / 2, abs=1e-4) and live > 0
        code, so, se = run_main(_args(server, yaml, out, cache, "--batch", "model", *FAST), monkeypatch, capsys)
        assert code == 0 and _spent(out)["requests"] == 4, so + se  # exactly what the plan said
        code, so, se = run_main(_args(server, yaml, out, cache, "--plan"), monkeypatch, capsys)
        assert code == 0 and "model openai:fake-model: 0 requests (4 already answered)" in so, so + se
        calls = sum(server.http_calls.values())
        code, so, se = run_main(_args(server, yaml, tmp_path / "all", cache, "--plan", "--all-records"), monkeypatch,
                                capsys)
        assert code == 0 and sum(server.http_calls.values()) == calls, so + se
