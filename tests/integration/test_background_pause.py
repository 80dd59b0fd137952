"""``background_paused``: what gives the time-bound tests the cores alone while ``.ci/run``'s verify runs beside them.

A stand-in for the background verify (a busy shell loop whose command line names ``verify``) is stopped inside the
block and running again after it; a process id that is not a verify, or that has ended, is left alone.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from integration.servers import BACKGROUND_PID_ENV, background_paused, process_state

pytestmark = pytest.mark.integration


def _busy(name: str) -> subprocess.Popen:
    """A busy loop whose command line ends with ``name``, once its program has replaced the forked copy of this one
    (until then /proc shows this process's command line, and nothing would be recognised)."""
    proc = subprocess.Popen(["bash", "-c", "while :; do :; done", name])
    deadline = time.monotonic() + 10.0
    while name.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)
    return proc


def _seen(pid: int) -> str:
    """What the pause saw of ``pid``, for a failure message."""
    return f"state {process_state(pid)!r}, command line {Path(f'/proc/{pid}/cmdline').read_bytes()!r}"


def test_the_background_verify_is_stopped_inside_the_block_and_continues_after(monkeypatch):
    proc = _busy("leaderboard-verify")
    try:
        monkeypatch.setenv(BACKGROUND_PID_ENV, str(proc.pid))
        with background_paused():
            assert process_state(proc.pid) == "T", _seen(proc.pid)
        assert process_state(proc.pid) in ("R", "S"), _seen(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    with background_paused():  # it has ended: nothing to pause
        pass


def test_a_process_that_is_not_the_verify_is_never_stopped(monkeypatch):
    proc = _busy("something-else")
    try:
        monkeypatch.setenv(BACKGROUND_PID_ENV, str(proc.pid))
        with background_paused():
            assert process_state(proc.pid) in ("R", "S")
    finally:
        proc.kill()
        proc.wait()
