"""Shared test set-up.

This file sits at the top of ``tests/`` so that pytest puts ``tests/`` on ``sys.path``: test modules in
the sub-folders (which mirror the package) import the shared fakes as ``fake_openai_server`` and
``judge_fakes``. The checkout's root is appended too (after the installed package), so that a family that lives in
the test tree is named ``tests.toy_family...`` as a plug-in package would be.
"""

import sys
from pathlib import Path

import pytest

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parents[1]))


@pytest.fixture(autouse=True)
def _forget_command_cache():
    """A command run in-process remembers its response cache for adapters it builds; forget it after each test."""
    yield
    from privasis_bench.engine.cache import end_session

    end_session()
