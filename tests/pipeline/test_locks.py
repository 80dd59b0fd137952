"""Concurrent runs never clobber (issue 16, point 4): one writer per task directory (a second is refused with
one line, a lock left by a killed process does not block), and runs sharing a response cache pay once per
prompt, also while the first is still waiting for its answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import OK, REPO_ROOT, Action, FakeOpenAIServer, write_tiny_task

from privasis_bench.engine.cache import ResponseCache
from privasis_bench.pipeline.lock import TaskDirBusyError, task_dir_lock

pytest.importorskip("openai")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**env, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT)}


def _run_args(url: str, yaml: Path, out: Path, cache: Path) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={url},timeout=30", "--tasks", str(yaml),
            "--judge", "none", "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20",
            "--concurrency", "2"]


def _background(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "privasis_bench", *argv], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _holder_process(code: str) -> subprocess.Popen:
    """A Python process that runs ``code``, prints "ready" and then waits to be killed."""
    script = textwrap.dedent(code) + "\nprint('ready', flush=True)\nimport time\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", script], env=_env(), stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _kill9(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)  # reaped: its pid no longer exists


def test_a_second_writer_is_refused_and_a_killed_holder_does_not_block(tmp_path: Path) -> None:
    task_dir = tmp_path / "out" / "tiny"
    holder = _holder_process(f"""
        from privasis_bench.pipeline.lock import task_dir_lock
        lock = task_dir_lock({str(task_dir)!r}, "run")
        lock.__enter__()
    """)
    try:
        with pytest.raises(TaskDirBusyError) as err:
            with task_dir_lock(task_dir, "run"):
                pass
        message = str(err.value)
        assert str(task_dir) in message and f"pid {holder.pid}" in message and "\n" not in message
    finally:
        _kill9(holder)
    with task_dir_lock(task_dir, "run"):  # the OS released the killed holder's lock
        pass


def test_two_concurrent_runs_on_one_output_the_second_exits_with_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=3)
    out = tmp_path / "out"
    # Both of the first run's requests in flight (--concurrency 2) stall: it stays busy until killed.
    holding = {"on": True}
    hold = lambda p, n: Action("stall", seconds=20.0) if holding["on"] else OK  # noqa: E731
    with FakeOpenAIServer(script=hold) as server:
        first = _background(_run_args(server.base_url, yaml, out, tmp_path / "cache1"))
        try:
            assert server.wait_for(lambda s: sum(s.received.values()) >= 2, timeout=60), "the first run never started"
            before = sum(server.received.values())
            code, stdout, stderr = run_main(_run_args(server.base_url, yaml, out, tmp_path / "cache2"), monkeypatch, capsys)
            assert code != 0
            lines = [line for line in (stdout + stderr).splitlines() if line.strip()]
            assert len(lines) == 1 and "being written by another privasis-bench process" in lines[0], lines
            assert f"pid {first.pid}" in lines[0] and "Traceback" not in stderr
            assert sum(server.received.values()) == before  # the refused run sent nothing
        finally:
            _kill9(first)
            holding["on"] = False
        code, stdout, _ = run_main(_run_args(server.base_url, yaml, out, tmp_path / "cache2"), monkeypatch, capsys)
        assert code == 0, stdout
    assert json.loads((out / "tiny" / "results.json").read_text())["complete"] is True


def test_two_concurrent_runs_sharing_a_cache_pay_each_prompt_once(tmp_path: Path) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    cache = tmp_path / "cache"
    with FakeOpenAIServer(delay=0.5) as server:
        runs = [_background(_run_args(server.base_url, yaml, tmp_path / name, cache)) for name in ("a", "b")]
        for proc in runs:
            _, stderr = proc.communicate(timeout=120)
            assert proc.returncode == 0, stderr
    assert len(server.received) == 4 and set(server.received.values()) == {1}, dict(server.received)
    outputs = [(tmp_path / name / "tiny" / "sanitized.jsonl").read_text() for name in ("a", "b")]
    assert [json.loads(l)["output"] for l in outputs[0].splitlines()] == [json.loads(l)["output"] for l in outputs[1].splitlines()]


def test_a_claim_blocks_while_its_process_lives_and_not_after(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    holder = _holder_process(f"""
        from privasis_bench.engine.cache import ResponseCache
        cache = ResponseCache({str(path)!r})
        assert cache.claim("k")
    """)
    mine = ResponseCache(path)
    try:
        assert not mine.claim("k")  # a live process is paying for it
        assert mine.claim("other")
    finally:
        _kill9(holder)
    assert mine.claim("k")  # its process is gone: the claim is ignored
    mine.release("k")
    assert ResponseCache(path, claim_ttl=0.0).claim("other")  # too old a claim is ignored as well
    mine.close()
