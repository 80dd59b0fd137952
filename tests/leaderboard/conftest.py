"""The leaderboard tests' shared runs: made once per test process (issue 52), each test tampering with a copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from leaderboard_fakes import fresh_copy, make_runs


@pytest.fixture(scope="session")
def made(tmp_path_factory):
    """Both runs of :func:`leaderboard_fakes.make_runs` and their submissions, made once per test process (each
    xdist worker) for every leaderboard test. Read them or copy them (:func:`subs`); never write into them."""
    mp = pytest.MonkeyPatch()
    try:
        yield make_runs(tmp_path_factory.mktemp("board"), mp)
    finally:
        mp.undo()


@pytest.fixture
def subs(made, tmp_path) -> Path:
    """A fresh copy of the made submissions, to tamper with."""
    return fresh_copy(made["submissions"], tmp_path / "submissions")
