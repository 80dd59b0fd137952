"""Ctrl-C is answered within 2 seconds on every back-end, with finished work saved (issue 51, item 6).

A real ``privasis-bench run`` is started as a subprocess; once its journal holds a first finished record (a
condition waited on, not a sleep), it gets SIGINT. It must exit with 130 and the "interrupted" line within the
2-second bound plus a stated margin of 1 second for a loaded CI machine, and every record the journal held at the
signal is still there. In process, llama.cpp stops its generation at the next token and requests waiting for a slot
give up at once; against an HTTP server the pending calls are cancelled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from integration.servers import background_paused

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
BOUND_S, MARGIN_S = 2.0, 1.0
FIRST_RECORD_TIMEOUT_S = 600.0


def _lines(path: Path) -> int:
    try:
        return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    except FileNotFoundError:
        return 0


def _interrupt_after_first_record(model: list[str], out: Path) -> None:
    command = [sys.executable, "-m", "privasis_bench", "run", *model, "--tasks", "privasis_sample", "--limit", "8",
               "--output", str(out), "--cache-dir", str(out / "cache"), "--no-progress", "--bootstrap-samples", "20",
               # a short budget: the first record is saved after about a hundred tokens, not a thousand (the task
               # accepts a cut answer); the other seven are still to come when the signal arrives
               "--max-tokens", "96"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    journal = out / "privasis_sample" / "sanitized.jsonl"
    # a terminal's Ctrl-C reaches a process whose SIGINT is at its default; a test runner started in the background
    # of a non-interactive shell (nohup ... &) ignores SIGINT and its children inherit that: undo it for the run
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + FIRST_RECORD_TIMEOUT_S
        while _lines(journal) == 0:  # the condition: a first record is finished and saved
            assert proc.poll() is None, f"the run ended before its first record: {proc.communicate()[0][-2000:]}"
            assert time.monotonic() < deadline, "no record finished in time"
            time.sleep(0.05)
        with background_paused():  # the bound is this program's: .ci/run's background judge waits meanwhile
            saved = _lines(journal)
            signalled = time.monotonic()
            proc.send_signal(signal.SIGINT)
            output, _ = proc.communicate(timeout=120)
            took = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, output[-2000:]
    assert "interrupted: finished work is saved" in output and "Traceback" not in output, output[-2000:]
    assert took <= BOUND_S + MARGIN_S, f"Ctrl-C took {took:.2f}s to end the run"
    assert _lines(journal) >= saved  # finished work is kept


def test_ctrl_c_in_process_llamacpp(tmp_path: Path, in_process_smollm2: None) -> None:
    _interrupt_after_first_record(["--model", "llamacpp:smollm2", "--judge", "llamacpp:smollm2"], tmp_path / "run")


def test_ctrl_c_against_an_http_server(tmp_path: Path, llama_server_url: str) -> None:
    args = f"base_url={llama_server_url}"
    _interrupt_after_first_record(["--model", "openai:smollm2", "--model-args", args, "--judge", "openai:smollm2",
                                   "--judge-args", args], tmp_path / "run")
