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
    # results.json records what was spent, live and batched
    spent = {d: json.loads((tmp_path / d / "tiny" / "results.json").read_text())["usage"] for d in ("live", "batch")}
    for role in ("model", "judge"):
        assert "batched_requests" not in spent["live"][role]
        assert spent["batch"][role]["batched_requests"] == spent["batch"][role]["requests"] > 0
        assert spent["batch"][role]["batched_prompt_tokens"] == spent["batch"][role]["prompt_tokens"] > 0
        assert spent["batch"][role]["prompt_tokens"] == spent["live"][role]["prompt_tokens"]
    # the model's outputs are one wave, the judge's tiers the next ones: a handful of batches, not one per record
    assert 2 <= len(server.batches) <= 5
    # every request paid exactly once by each run (the live one, then the batched one)
    assert set(server.paid.values()) == {2} and sum(server.paid.values()) == 2 * live_calls
    # a second run is answered from the cache: no batch, no call
    with FakeBatchServer() as again:
        code, so, se = _run(again, yaml, tmp_path / "batch", tmp_path / "c2", monkeypatch, capsys,
                            "--batch", "model,judge", *FAST)
        assert code == 0 and not again.batches and again.live_calls == 0, so + se


def _complete(out: Path) -> bool:
    return bool(json.loads((out / "tiny" / "results.json").read_text())["checks"]["passed"])


@pytest.mark.parametrize("fault", ["expire", "cancel", "malformed", "missing"])
def test_expired_batch_and_unreadable_results_go_to_the_next_batch(tmp_path: Path, monkeypatch, capsys, fault) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    with FakeBatchServer(**{fault: {1}}) as server:
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys, "--batch", "model", *FAST)
        assert code == 0, so + se
        first = server.batches[min(server.batches, key=lambda b: server.batches[b]["_order"])]
        assert first["status"] == {"expire": "expired", "cancel": "cancelled"}.get(fault, "completed")
        model_batches = [b for b in server.batches.values() if b["metadata"]]
        assert len(model_batches) == 2  # the unanswered (or unreadable) half went out again, once
    assert _complete(tmp_path / "out")
    if fault in ("expire", "cancel"):  # what the batch did answer was kept: nothing paid twice
        assert set(server.paid.values()) == {1}


def test_per_request_errors_are_retried_in_a_later_batch_or_recorded(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    fails = lambda prompt, n: (500 if n == 0 else None) if "Person1 " in prompt else (400 if "Person2 " in prompt else None)  # noqa: E731
    with FakeBatchServer(request_error=fails) as server:
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys, "--batch", "model", *FAST)
    assert code == 1, so + se  # the 400 is a recorded failure: the run is incomplete and says so
    outputs = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "out" / "tiny" / "sanitized.jsonl").read_text().splitlines()}
    assert outputs["r001"]["error"] is None and outputs["r001"]["attempts"] == 2  # the 500 was asked again
    assert outputs["r002"]["output"] is None and "HTTP 400" in outputs["r002"]["error"]
    assert outputs["r000"]["error"] is None and outputs["r003"]["error"] is None


def test_detach_exits_after_submitting_and_a_later_run_collects(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    with FakeBatchServer(latency=60.0) as server:
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys,
                            "--batch", "model,judge", "--batch-detach", *FAST)
        assert code == 0, so + se
        assert "pending" in se and "run the same command again" in se
        assert len(server.batches) == 1 and not (tmp_path / "out" / "tiny" / "results.json").exists()
        server.latency = 0.0
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys,
                            "--batch", "model,judge", *FAST)
        assert code == 0, so + se
        assert set(server.paid.values()) == {1}
        assert sum(1 for b in server.batches.values() if b["request_counts"]["total"] == 4) >= 1
    assert _complete(tmp_path / "out")
    # the ledger over both invocations: the detached run counted the batch it submitted, the collecting run did not
    cumulative = json.loads((tmp_path / "out" / "tiny" / "results.json").read_text())["usage_cumulative"]["total"]
    roles = cumulative["usage"].values()
    assert cumulative["invocations"] == 2
    assert {k: sum(r[k] for r in roles) for k in ("requests", "prompt_tokens", "completion_tokens")} == {
        "requests": sum(server.paid.values()), **server.billed}


def test_batches_are_split_at_the_batch_size(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=5)
    with FakeBatchServer() as server:
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys,
                            "--batch", "model", "--batch-size", "2", *FAST)
        assert code == 0, so + se
        sizes = sorted(b["request_counts"]["total"] for b in server.batches.values())
    assert sizes == [1, 2, 2]


def test_provider_without_batches_is_one_line_at_start(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=2)
    with FakeBatchServer(batches=False) as server:
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys, "--batch", "model", *FAST)
        assert server.live_calls == 0
    assert code == 2 and "offers no batch endpoints" in se and "Traceback" not in se
    assert len(se.strip().splitlines()) == 1
    with FakeBatchServer(batches=False) as server:  # the judge's check comes before any task directory or ledger
        code, so, se = run_main(["run", "--model", "identity", "--tasks", str(yaml), "--judge", "openai:fake-judge",
                                 "--judge-args", f"base_url={server.base_url}", "--output", str(tmp_path / "oj"),
                                 "--cache-dir", str(tmp_path / "c"), "--batch", "judge", "--no-progress"],
                                monkeypatch, capsys)
        assert server.live_calls == 0
    assert code == 2 and "offers no batch endpoints" in se and len(se.strip().splitlines()) == 1
    assert not (tmp_path / "oj" / "tiny").exists()
    code, so, se = run_main(["run", "--model", "identity", "--tasks", str(yaml), "--output", str(tmp_path / "o2"),
                             "--judge", "none", "--batch", "model", "--no-progress"], monkeypatch, capsys)
    assert code == 2 and "has no batch interface" in se and len(se.strip().splitlines()) == 1
    code, so, se = run_main(["run", "--model", "identity", "--tasks", str(yaml), "--output", str(tmp_path / "o3"),
                             "--judge", "none", "--batch", "sanitizer"], monkeypatch, capsys)
    assert code == 2 and "--batch takes model and/or judge" in se
    code, so, se = run_main(["run", "--model", "identity", "--tasks", str(yaml), "--output", str(tmp_path / "o4"),
                             "--judge", "none", "--batch-detach"], monkeypatch, capsys)
    assert code == 2 and "--batch-detach needs --batch" in se and not (tmp_path / "o4").exists()
    code, so, se = run_main(["evaluate", "--predictions", str(tmp_path / "p.jsonl"), "--tasks", str(yaml), "--output",
                             str(tmp_path / "o5"), "--judge", "none", "--batch", "model"], monkeypatch, capsys)
    assert code == 2 and "--batch model: evaluate has no model" in se and len(se.strip().splitlines()) == 1, se
    assert not (tmp_path / "o5").exists()


def test_a_provider_restart_loses_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    """Batches submitted, the provider restarts from its stored state, a later run collects them (nothing resent)."""
    yaml = write_tiny_task(tmp_path / "task", n=4)
    state = tmp_path / "provider.json"
    with FakeBatchServer(latency=60.0, state_path=state) as server:
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys,
                            "--batch", "model", "--batch-detach", *FAST)
        assert code == 0 and len(server.batches) == 1, so + se
    with FakeBatchServer(latency=0.0, state_path=state) as restarted:
        code, so, se = _run(restarted, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys,
                            "--batch", "model", *FAST)
        assert code == 0, so + se
        assert len(restarted.batches) == 1 and set(restarted.paid.values()) == {1} and restarted.live_calls > 0


def test_progress_is_a_plain_line_per_batch_change(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=3)
    with FakeBatchServer(latency=0.3) as server:
        args = [a for a in ["run", "--model", "openai:fake-model", "--model-args", f"base_url={server.base_url}",
                            "--tasks", str(yaml), "--judge", "none", "--output", str(tmp_path / "out"), "--cache-dir",
                            str(tmp_path / "c"), "--batch", "model", *FAST]]
        code, so, se = run_main(args, monkeypatch, capsys)
    assert code == 0, so + se
    lines = [x for x in se.splitlines() if x.startswith("[batch model openai:fake-model]")]
    assert "submitted batch" in lines[0] and "1 submitted, 1 pending, oldest 0s, 0 completed, 0 requests answered" in lines[0]
    assert any(" in_progress (0/3 answered)" in x for x in lines)
    assert "completed: 3 of 3 requests answered | 1 submitted, 0 pending, 1 completed, 3 requests answered" in lines[-1]
    assert len(lines) == len(set(lines))  # one line per change, not a line per poll


def test_no_key_reaches_the_cache_batches_table_or_results(tmp_path: Path, monkeypatch, capsys) -> None:
    key, judge_key = "sk-batch-SECRET-0123456789", "judge-SECRET-9876543210"
    monkeypatch.setenv("OPENAI_API_KEY", judge_key)
    yaml = write_tiny_task(tmp_path / "task", n=2)
    with FakeBatchServer(latency=60.0) as server:  # detached: the batches table still holds the batch
        code, so, se = run_main(
            ["run", "--model", "openai:fake-model", "--model-args", f"base_url={server.base_url},api_key={key}",
             "--tasks", str(yaml), "--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}",
             "--output", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c"), "--batch", "model,judge",
             "--batch-detach", *FAST], monkeypatch, capsys)
        assert code == 0, so + se
    files = [p for p in [*(tmp_path / "out").rglob("*"), *(tmp_path / "c").rglob("*")] if p.is_file()]
    assert any(p.name.startswith("responses.sqlite") for p in files)
    assert [p for p in files for k in (key, judge_key) if k.encode() in p.read_bytes()] == []
    assert key not in so + se and judge_key not in so + se


def test_evaluate_batches_the_judge_of_saved_outputs(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=3)
    with FakeBatchServer() as server:
        code, so, se = _run(server, yaml, tmp_path / "live", tmp_path / "c1", monkeypatch, capsys)
        assert code == 0, so + se
        before = server.live_calls
        code, so, se = run_main(
            ["evaluate", "--predictions", str(tmp_path / "live" / "tiny" / "sanitized.jsonl"), "--tasks", str(yaml),
             "--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}", "--output",
             str(tmp_path / "ev"), "--cache-dir", str(tmp_path / "c2"), "--no-progress", "--bootstrap-samples", "20",
             "--max-off-label", "100000", "--batch", "judge", *FAST], monkeypatch, capsys)
        assert code == 0, so + se
        assert server.live_calls == before and len(server.batches) == 3  # the judge's three waves
    assert _results(tmp_path / "ev") == _results(tmp_path / "live")
