"""Shared test set-up.

This file sits at the top of ``tests/`` so that pytest puts ``tests/`` on ``sys.path``: test modules in
the sub-folders (which mirror the package) import the shared fakes as ``fake_openai_server`` and
``judge_fakes``.
"""
