"""Shared test set-up.

This file sits at the top of ``tests/`` so that pytest puts ``tests/`` on ``sys.path``: test modules in
the sub-folders (which mirror the package) import the shared fakes as ``fake_openai_server`` and
``judge_fakes``. The checkout's root is appended too (after the installed package), so that a family that lives in
the test tree is named ``tests.toy_family...`` as a plug-in package would be.

Tiers (unit by default, ``--runslow``, ``--runintegration``) and the check that a test is not marked lighter than
it is live in ``tests/tiers.py``.
"""

import os
import pickle
import sys
from pathlib import Path

import pytest

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parents[1]))

pytest_plugins = ["tiers", "integration.servers"]  # integration.servers: one llama.cpp / vLLM server per session

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def committed_verdicts(tmp_path_factory) -> tuple:
    """Every committed submission (``submissions/``) verified once for the whole run, ownership included.

    The tests that read the committed board share this one ``verify_paths`` run instead of each verifying the board
    again; they must not change the outcomes they are given. Under pytest-xdist the first worker that needs it
    verifies and leaves the outcomes (pickled) beside the workers' temporary folders; the others read them, so the
    board is verified once per run, not once per worker.
    """
    from privasis_bench.leaderboard.verify import verify_paths

    if not (REPO / "submissions").is_dir():
        pytest.skip("not a source checkout (no submissions/)")
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return tuple(verify_paths([REPO / "submissions"]))
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent / "committed_verdicts.pickle"  # one folder per run, all workers
    with FileLock(f"{shared}.lock"):
        if shared.is_file():
            return pickle.loads(shared.read_bytes())
        verdicts = tuple(verify_paths([REPO / "submissions"]))
        shared.write_bytes(pickle.dumps(verdicts))
        return verdicts


@pytest.fixture(autouse=True)
def _forget_command_cache():
    """A command run in-process remembers its response cache for adapters it builds; forget it after each test."""
    yield
    from privasis_bench.engine.cache import end_session

    end_session()
