"""Fault injection against a real local HTTP server speaking the OpenAI chat-completions protocol.

* 429 (with Retry-After), 500 and stalls past the client timeout: the run completes with the same
  outputs as a clean run.
* 401: the run stops at once with a clear message, and the API key appears in no output or cache file.
* SIGKILL mid-run, then the same command again: the outputs equal an uninterrupted run's. Killed between
  calls, the server sees every record requested exactly once; killed with a call in flight, no prompt is
  answered twice (the only repeated request is the in-flight one, which the server sees abandoned).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_main import DUMP_STACKS_ENV, ended, run_main
from fake_openai_server import OK, REPO_ROOT, Action, FakeOpenAIServer, expected_output, write_tiny_task

from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.loading import load_records
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.retry import FatalModelError, RetryPolicy
from privasis_bench.pipeline.flow import run_sanitize
from privasis_bench.pipeline.sanitize import read_outputs
from privasis_bench.protocol.testee import build_sanitize_request
from privasis_bench.tasks.registry import load_task

pytest.importorskip("openai")

SECRET = "sk-test-SECRET123"


def _task(tmp_path: Path, n: int):
    task = load_task(str(write_tiny_task(tmp_path / "task", n=n)))
    records = load_records(task).records
    prompts = [build_sanitize_request(r, task).messages[0][1] for r in records]
    return task, records, prompts


def _run_api(server: FakeOpenAIServer, task, records, out: Path, cache_dir: Path, *, concurrency: int = 3):
    spec = ModelSpec.parse("openai:fake-model", {"base_url": server.base_url, "timeout": 0.5, "api_key": SECRET})
    retry = RetryPolicy(max_attempts=5, base_delay=0.05, max_delay=0.2, jitter=0.1)
    with Engine(build_adapter(spec), spec, role="model", cache=ResponseCache(cache_dir / "c.sqlite"), retry=retry,
                concurrency=concurrency, progress=False) as engine:
        outputs = run_sanitize(records, task, engine, out)
    return outputs, engine.stats


def test_faults_give_the_same_outputs_as_a_clean_run(tmp_path: Path) -> None:
    task, records, prompts = _task(tmp_path, n=6)
    plans = {
        prompts[0]: [Action("429", retry_after="1")],
        prompts[1]: [Action("500"), Action("500")],
        prompts[2]: [Action("stall", seconds=1.5)],
        prompts[3]: [Action("429"), Action("500")],
    }
    script = lambda prompt, n: plans.get(prompt, [])[n] if n < len(plans.get(prompt, [])) else OK  # noqa: E731

    with FakeOpenAIServer() as clean:
        clean_out, _ = _run_api(clean, task, records, tmp_path / "clean" / "s.jsonl", tmp_path / "clean")
    with FakeOpenAIServer(script=script) as faulty:
        out, stats = _run_api(faulty, task, records, tmp_path / "faulty" / "s.jsonl", tmp_path / "faulty")
        assert faulty.wait_for(lambda s: s.abandoned[prompts[2]] == 1, timeout=5)  # the stalled reply found no client

    assert all(o.ok for o in out) and stats.failed == 0
    assert [o.output for o in out] == [o.output for o in clean_out] == [expected_output(p) for p in prompts]
    assert [o.attempts for o in out] == [2, 3, 2, 3, 1, 1]
    assert stats.retries == 6 and stats.batches == 12
    for p in prompts:
        assert faulty.served[p] == 1 and faulty.received[p] == 1 + len(plans.get(p, []))
    # The retry after "429 Retry-After: 1" waited for the server's hint, not the 0.05 s backoff.
    times = [t for t, prompt, _ in faulty.events if prompt == prompts[0]]
    assert times[1] - times[0] >= 0.95


def _cli(args: list[str], *, env_extra: dict[str, str] | None = None, **kw) -> subprocess.Popen | subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT), **(env_extra or {})})
    cmd = [sys.executable, "-m", "privasis_bench", "sanitize", *args]
    if kw.pop("background", False):
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=90)


def _cli_inprocess(args: list[str]):
    """The same command through typer's test runner (no interpreter start-up)."""
    from typer.testing import CliRunner

    from privasis_bench.cli import app

    return CliRunner().invoke(app, ["sanitize", *args])


def _main(args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """``sanitize`` through the console-script entry point in this process: (exit status, stdout, stderr)."""
    return run_main(["sanitize", *args], monkeypatch, capsys)


def _args(server: FakeOpenAIServer, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["--model", "openai:fake-model", "--model-args", f"base_url={server.base_url},timeout=5", "--tasks", str(yaml),
            "--output", str(out), "--cache-dir", str(cache), "--concurrency", "1", "--retry-base-delay", "0.05",
            "--no-progress", *extra]


def _kill9(proc: subprocess.Popen) -> None:
    """SIGKILL a background CLI run and check it died of that signal (not of its own accord)."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL


def _all_bytes(*dirs: Path) -> bytes:
    return b"".join(p.read_bytes() for d in dirs if d.exists() for p in sorted(d.rglob("*")) if p.is_file())


def test_401_stops_at_once_without_leaking_the_key(tmp_path: Path, monkeypatch, capsys) -> None:
    """Through the console-script entry point: one line on stderr, exit code 2, the key nowhere."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    with FakeOpenAIServer(script=lambda p, n: Action("401")) as server:
        code, stdout, stderr = _main(_args(server, yaml, out, cache), monkeypatch, capsys)
        assert sum(server.received.values()) == 1  # no retry, no further record
    assert code == 2, stderr
    message = stderr + stdout
    assert "401" in message and "openai:fake-model" in message and "Incorrect API key" in message
    assert "Traceback" not in message
    assert "SECRET123" not in message
    assert b"SECRET123" not in _all_bytes(out, cache)


def test_401_in_run_with_calls_in_flight_prints_one_line_and_no_asyncio_traceback(tmp_path: Path) -> None:
    """A fresh process (as a user runs it): every in-flight task is awaited, so nothing is printed at exit."""
    yaml = write_tiny_task(tmp_path / "task", n=8)
    with FakeOpenAIServer(script=lambda p, n: Action("401")) as server:
        args = _args(server, yaml, tmp_path / "out", tmp_path / "cache", "--judge", "none")
        args[args.index("--concurrency") + 1] = "4"
        env = {**os.environ, "OPENAI_API_KEY": SECRET, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run([sys.executable, "-m", "privasis_bench", "run", *args], capture_output=True, text=True,
                              env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Task exception was never retrieved" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "HTTP 401" in done.stderr


def test_401_with_the_key_in_model_args_leaks_it_nowhere(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    with FakeOpenAIServer(script=lambda p, n: Action("401")) as server:
        args = _args(server, yaml, out, cache)
        args[3] += f",api_key={SECRET}"
        result = _cli_inprocess(args)
        assert sum(server.received.values()) == 1
    assert isinstance(result.exception, FatalModelError), result.output
    assert "401" in str(result.exception) and "SECRET123" not in str(result.exception) + result.output
    assert b"SECRET123" not in _all_bytes(out, cache)


def _same_outputs(a: Path, b: Path) -> None:
    fields = ("id", "prompt_hash", "raw_output", "output", "finish_reason", "error")
    rows_a = [{k: json.loads(l)[k] for k in fields} for l in a.read_text().splitlines()]
    rows_b = [{k: json.loads(l)[k] for k in fields} for l in b.read_text().splitlines()]
    assert rows_a == rows_b


@pytest.mark.slow
def test_sigkill_then_rerun_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    n = 8
    yaml = write_tiny_task(tmp_path / "task", n=n)
    out, cache = tmp_path / "killed", tmp_path / "cache-killed"
    _, _, prompts = _task(tmp_path / "same", n=n)
    # The fourth prompt's first request is held long enough for the kill to land while it is in flight.
    hold = lambda p, k: Action("stall", seconds=2.0) if p == prompts[3] and k == 0 else OK  # noqa: E731
    with FakeOpenAIServer(delay=0.1, script=hold) as server:
        args = _args(server, yaml, out, cache)
        proc = _cli(args, background=True)
        try:
            # Three records answered, the fourth in flight: kill -9.
            assert server.wait_for(lambda s: s.received[prompts[3]] >= 1, timeout=60), "the run never got going"
        finally:
            _kill9(proc)
        partial = read_outputs(out / "tiny" / "sanitized.jsonl")
        assert sorted(partial) == ["r000", "r001", "r002"]  # killed mid-run, finished records were on disk

        rerun = _cli(args)
        assert rerun.returncode == 0, rerun.stderr
        served_after_rerun = dict(server.served)
        third = _cli_inprocess(args)  # nothing left: zero calls
        assert third.exit_code == 0, third.output
        assert "0 adapter call(s)" in third.output
        assert dict(server.served) == served_after_rerun
        assert server.wait_for(lambda s: sum(s.abandoned.values()) == 1, timeout=5)
    # Every prompt answered exactly once across both runs; the only repeat was the abandoned in-flight one.
    assert len(server.served) == n and set(server.served.values()) == {1}
    assert sum(server.received.values()) == n + 1

    with FakeOpenAIServer(delay=0.0) as clean:
        straight = _cli_inprocess(_args(clean, yaml, tmp_path / "straight", tmp_path / "cache-straight"))
        assert straight.exit_code == 0, straight.output
    _same_outputs(out / "tiny" / "sanitized.jsonl", tmp_path / "straight" / "tiny" / "sanitized.jsonl")
    lines = (out / "tiny" / "sanitized.jsonl").read_text().splitlines()
    assert len(lines) == n and all(json.loads(l)["error"] is None for l in lines)


@pytest.mark.slow
def test_sigkill_between_requests_then_rerun_requests_no_record_twice(tmp_path: Path) -> None:
    """Killed while no call is in flight (requests paced 2 s apart): across both runs the server sees every
    record's request exactly once, and the outputs equal an uninterrupted run's."""
    n = 5
    yaml = write_tiny_task(tmp_path / "task", n=n)
    out, cache = tmp_path / "killed", tmp_path / "cache-killed"
    sanitized = out / "tiny" / "sanitized.jsonl"
    with FakeOpenAIServer(delay=0.05) as server:
        args = _args(server, yaml, out, cache, "--rpm", "30")
        proc = _cli(args, background=True)
        try:
            deadline = time.monotonic() + 60
            while not (sanitized.exists() and len(read_outputs(sanitized)) == 2):  # poll the file, not server events
                assert time.monotonic() < deadline, "the run never got going"
                time.sleep(0.02)
            assert sum(server.received.values()) == 2  # the third request waits for its pacing slot
        finally:
            _kill9(proc)
        rerun = _cli(args)
        assert rerun.returncode == 0, rerun.stderr
    assert len(server.received) == n and set(server.received.values()) == {1}, dict(server.received)
    assert sum(server.abandoned.values()) == 0
    with FakeOpenAIServer(delay=0.0) as clean:
        straight = _cli_inprocess(_args(clean, yaml, tmp_path / "straight", tmp_path / "cache-straight"))
        assert straight.exit_code == 0, straight.output
    _same_outputs(sanitized, tmp_path / "straight" / "tiny" / "sanitized.jsonl")


def test_cli_reports_failures_exits_non_zero_and_resumes_only_them(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    broken: set[str] = set()
    with FakeOpenAIServer(script=lambda p, n: Action("500") if p in broken else OK) as server:
        _, _, prompts = _task(tmp_path / "again", n=4)
        broken.add(prompts[1])
        args = _args(server, yaml, out, cache, "--max-attempts", "2")
        code, stdout, stderr = _main(args, monkeypatch, capsys)  # exit status 1 and a resume hint
        assert code == 1, stderr
        assert "1 failed" in stdout and "1 record(s) failed; re-run the same command" in stderr
        assert server.received[prompts[1]] == 2 and server.served[prompts[1]] == 0
        lines = [json.loads(l) for l in (out / "tiny" / "sanitized.jsonl").read_text().splitlines()]
        assert lines[1]["output"] is None and "HTTP 500" in lines[1]["error"]

        broken.clear()
        second = _cli_inprocess(args)
        assert second.exit_code == 0, second.output
        assert "3 resumed from the output file" in second.output and "1 adapter call(s)" in second.output
        assert dict(server.served) == {p: 1 for p in prompts}
    outputs = read_outputs(out / "tiny" / "sanitized.jsonl")
    assert [o.output for o in outputs.values()] == [expected_output(p) for p in prompts]


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["SIGKILL", "SIGTERM"])
def test_spend_of_an_interrupted_run_is_on_the_ledger(tmp_path: Path, stop: str, monkeypatch, capsys) -> None:
    """Issue 23 point 6: the paid calls of a run stopped by kill -9 or SIGTERM appear in usage_cumulative after resume."""
    yaml = write_tiny_task(tmp_path / "task", n=40)
    out, cache = tmp_path / "out", tmp_path / "cache"
    ledger = out / "tiny" / "usage.json"

    def paid_on_ledger() -> int:
        try:
            entries = json.loads(ledger.read_text())["invocations"]
        except (OSError, ValueError, KeyError):
            return 0
        return sum(e["usage"].get("model", {}).get("batches", 0) for e in entries)  # calls made (paid)

    with FakeOpenAIServer(delay=0.05) as server:
        args = ["run", *_args(server, yaml, out, cache, "--judge", "none", "--bootstrap-samples", "20")]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT), "OPENAI_API_KEY": "sk-test-x",
               **DUMP_STACKS_ENV}
        proc = subprocess.Popen([sys.executable, "-m", "privasis_bench", *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while paid_on_ledger() < 8:  # wait on the condition itself: the ledger already counts paid calls
            assert proc.poll() is None and time.monotonic() < deadline, "the run never recorded its spend"
            time.sleep(0.05)
        recorded_before_stop = paid_on_ledger()
        os.kill(proc.pid, getattr(signal, stop))
        ended(proc, 30, f"{stop} after {recorded_before_stop} paid calls")
        for key in ("HF_HUB_OFFLINE", "OPENAI_API_KEY"):  # the resume runs in this process, as the stopped run did
            monkeypatch.setenv(key, env[key])
        code, _, stderr = run_main(args, monkeypatch, capsys)
        assert code == 0, stderr
        served = sum(server.served.values())
    cumulative = json.loads((out / "tiny" / "results.json").read_text())["usage_cumulative"]
    assert cumulative["total"]["invocations"] == 2
    killed = cumulative["invocations"][0]["usage"]["model"]
    assert killed["batches"] >= recorded_before_stop >= 8  # the stopped invocation's paid calls are counted
    # nothing counted twice: every counted call reached the server (one may have been in flight at the stop)
    assert cumulative["total"]["usage"]["model"]["batches"] <= served + 1
