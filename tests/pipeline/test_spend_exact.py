"""Issue 34 points 4 and 5: an exact spend ledger, and no temporary file left after an interrupted run is resumed.

* ``requests`` counts only requests that reached the server: no cache hit, no call still queued;
* after SIGTERM the ledger is exact and says ``interrupted``; after SIGKILL it lacks at most the calls in flight,
  the entry stays ``running`` and the next invocation marks it ``killed`` and says so;
* a resume removes the temporary files the killed run left (only those of dead processes).
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
from fake_openai_server import OK, REPO_ROOT, Action, FakeOpenAIServer, reply_for, write_tiny_task

from privasis_bench.pipeline.lock import task_dir_lock
from privasis_bench.pipeline.spend import KILLED_NOTE, LEDGER_NAME
from privasis_bench.pipeline.tempfiles import stale_temp_files

pytest.importorskip("openai")


def _args(url: str, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={url},timeout=60", "--tasks", str(yaml),
            "--judge", "none", "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples",
            "20", *extra]


def _ledger(task_dir: Path) -> list[dict]:
    try:
        return json.loads((task_dir / LEDGER_NAME).read_text())["invocations"]
    except (OSError, ValueError, KeyError):
        return []


def _model(entry: dict) -> dict:
    return entry["usage"].get("model", {})


def _env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT), "OPENAI_API_KEY": "sk-test-x",
            **DUMP_STACKS_ENV}


def _as_in_a_terminal() -> None:
    """The child gets Ctrl-C as a foreground command does: a test runner started in the background by a script
    inherits SIGINT ignored, and a command started with SIGINT ignored rightly keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _background(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "privasis_bench", *argv], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_as_in_a_terminal)


def _wait(condition, proc: subprocess.Popen, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def test_requests_count_only_calls_that_reached_the_server(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-x")
    yaml = write_tiny_task(tmp_path / "task", n=4)
    cache = tmp_path / "cache"
    with FakeOpenAIServer() as server:
        assert run_main(_args(server.base_url, yaml, tmp_path / "a", cache), monkeypatch, capsys)[0] == 0
        assert run_main(_args(server.base_url, yaml, tmp_path / "b", cache), monkeypatch, capsys)[0] == 0  # all cached
        received = sum(server.received.values())
    [first] = _ledger(tmp_path / "a" / "tiny")
    [second] = _ledger(tmp_path / "b" / "tiny")
    assert received == 4 and _model(first)["requests"] == 4 and _model(first)["asked"] == 4
    assert first["ended"] == "completed" and first["pid"] == os.getpid()
    assert _model(second)["requests"] == 0 and _model(second)["asked"] == 4 and _model(second)["cached"] == 4
    assert _model(second)["completion_tokens"] == 0
    results = json.loads((tmp_path / "b" / "tiny" / "results.json").read_text())
    assert results["usage_cumulative"]["invocations"][-1]["ended"] == "completed"
    assert results["usage_cumulative"]["total"]["killed_invocations"] == 0


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_sigterm_or_sigint_leaves_an_exact_ledger_without_queued_calls(tmp_path: Path, stop: str) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=6)
    out, cache = tmp_path / "out", tmp_path / "cache"
    task_dir = out / "tiny"
    stall = {"on": True}
    script = lambda p, n: Action("stall", seconds=30.0) if stall["on"] else OK  # noqa: E731
    with FakeOpenAIServer(script=script) as server:
        proc = _background(_args(server.base_url, yaml, out, cache, "--concurrency", "2"))
        try:
            assert server.wait_for(lambda s: sum(s.received.values()) >= 2, timeout=60), "the run never started"
            _wait(lambda: any(_model(e).get("requests") == 2 for e in _ledger(task_dir)), proc, "the sends were saved")
            os.kill(proc.pid, getattr(signal, stop))
            ended(proc, 30, f"{stop} while two calls stalled")
        finally:
            if proc.poll() is None:
                proc.kill()
            stall["on"] = False
        received = sum(server.received.values())
    [entry] = _ledger(task_dir)
    assert received == 2  # four more were queued behind --concurrency 2: never sent, never counted
    assert _model(entry)["requests"] == 2 and _model(entry)["asked"] >= 2
    assert entry["ended"] == "interrupted"


@pytest.mark.slow
def test_sigkill_loses_at_most_the_calls_in_flight_and_the_resume_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-x")
    yaml = write_tiny_task(tmp_path / "task", n=40)
    out, cache = tmp_path / "out", tmp_path / "cache"
    task_dir = out / "tiny"
    concurrency = 4
    with FakeOpenAIServer(delay=0.05) as server:
        args = _args(server.base_url, yaml, out, cache, "--concurrency", str(concurrency))
        proc = _background(args)
        _wait(lambda: any(_model(e).get("completion_tokens", 0) > 0 and _model(e).get("requests", 0) >= 12
                          for e in _ledger(task_dir)), proc, "paid calls were on the ledger")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        with server.lock:
            received = sum(server.received.values())
            served_tokens = sum(len(reply_for(p).split()) * n for p, n in server.served.items())
        [killed] = _ledger(task_dir)
        assert killed["ended"] == "running"  # what a kill leaves: the entry never finalised
        assert abs(_model(killed)["requests"] - received) <= concurrency  # at most the calls in flight
        most_per_answer = max(len(reply_for(p).split()) for p in server.served)
        assert served_tokens - concurrency * most_per_answer <= _model(killed)["completion_tokens"] <= served_tokens
        temp = [p.name for p in task_dir.iterdir() if p.name.endswith(".tmp")]
        assert any(n.startswith(".sanitized.jsonl.") for n in temp) and any(n.startswith(".samples.jsonl.") for n in temp)

        code, stdout, _ = run_main(args, monkeypatch, capsys)
    assert code == 0, stdout
    assert f"pid {proc.pid}" in stdout and "was killed" in stdout  # the resume says so, once
    assert sum("was killed" in line for line in stdout.splitlines()) == 1
    assert not [p.name for p in task_dir.iterdir() if p.name.endswith(".tmp")]  # the killed run's temp files are gone
    cumulative = json.loads((task_dir / "results.json").read_text())["usage_cumulative"]
    first, second = cumulative["invocations"]
    assert first["ended"] == "killed" and first["note"] == KILLED_NOTE and second["ended"] == "completed"
    assert cumulative["total"]["killed_invocations"] == 1


def test_a_writer_removes_only_the_temp_files_of_dead_processes(tmp_path: Path) -> None:
    task_dir = tmp_path / "t"
    task_dir.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)  # reaped: no process has this id now
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = [f".samples.jsonl.{dead_pid}.tmp", f".sanitized.jsonl.{dead_pid}.ordered.tmp",
                 f".results.json.{alive.pid}.tmp", f".samples.jsonl.{os.getpid()}.tmp", "samples.jsonl", "x.tmp"]
        for name in names:
            (task_dir / name).write_text("x")
        assert [p.name for p in stale_temp_files(task_dir)] == sorted(names[:2])
        with task_dir_lock(task_dir, "run"):
            left = sorted(p.name for p in task_dir.iterdir() if p.name != ".privasis-bench.lock")
        assert left == sorted(names[2:])  # a live process's file, our own, and files that are no temp files stay
    finally:
        alive.kill()
        alive.wait()
