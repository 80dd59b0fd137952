"""Shared test set-up.

This file sits at the top of ``tests/`` so that pytest puts ``tests/`` on ``sys.path``: test modules in
the sub-folders (which mirror the package) import the shared fakes as ``fake_openai_server`` and
``judge_fakes``.
"""

import pytest


@pytest.fixture(autouse=True)
def _forget_command_cache():
    """A command run in-process remembers its response cache for adapters it builds; forget it after each test."""
    yield
    from privasis_bench.engine.cache import end_session

    end_session()
