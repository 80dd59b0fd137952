"""``background_paused``: what gives the time-bound tests the cores alone while ``.ci/run``'s verify runs beside them.

A stand-in for the background verify (a busy shell loop whose command line names ``verify``) is stopped inside the
block and running again after it; a process id that is not a verify, or that has ended, is left alone.
"""

from __future__ import annotations

import subprocess

import pytest

from integration.servers import BACKGROUND_PID_ENV, background_paused, process_state

pytestmark = pytest.mark.integration


def _busy(name: str) -> subprocess.Popen:
    return subprocess.Popen(["bash", "-c", "while :; do :; done", name])


def test_the_background_verify_is_stopped_inside_the_block_and_continues_after(monkeypatch):
    proc = _busy("leaderboard-verify")
    try:
        monkeypatch.setenv(BACKGROUND_PID_ENV, str(proc.pid))
        with background_paused():
            assert process_state(proc.pid) == "T"
        assert process_state(proc.pid) in ("R", "S")
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
