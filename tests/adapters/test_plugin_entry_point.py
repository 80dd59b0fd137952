"""A third-party adapter package registers a provider through the entry-point group, without a fork."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.registry import build_adapter, list_providers
from privasis_bench.adapters.spec import ModelSpec

PLUGIN_DIR = Path(__file__).resolve().parent.parent / "plugins" / "example_adapter"


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    """Install the example plugin into this environment unless it is already there.

    It is built from a copy, so setuptools' build/ and egg-info directories never land in the repository.
    """
    if importlib.util.find_spec("privasis_example_adapter") is None:
        source = tmp_path_factory.mktemp("plugin") / "example_adapter"
        shutil.copytree(PLUGIN_DIR, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--disable-pip-version-check"]
        if importlib.util.find_spec("setuptools") is not None:
            cmd.append("--no-build-isolation")  # offline-friendly: build with the setuptools already here
        proc = subprocess.run(cmd + [str(source)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"pip install failed:\n{proc.stdout}\n{proc.stderr}"
        importlib.invalidate_caches()
    assert importlib.util.find_spec("privasis_example_adapter") is not None


def test_plugin_is_built_by_spec_name(installed_plugin):
    adapter = build_adapter(ModelSpec.parse("echo-upper:any,suffix=!"))
    result = asyncio.run(adapter.agenerate(ChatRequest.user("keep it down", max_tokens=8)))
    assert (result.text, result.finish_reason) == ("KEEP IT DOWN!", "stop")
    row = next(r for r in list_providers() if r.name == "echo-upper")
    assert row.source == "entry point" and row.distribution == "privasis-example-adapter" and row.error is None


def test_models_list_shows_the_plugin(installed_plugin):
    out = subprocess.run([sys.executable, "-m", "privasis_bench", "models", "list"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "echo-upper" in line)
    assert "entry point" in line and "privasis-example-adapter" in line
    for builtin in ("llamacpp", "regex-scrubber", "lmeval"):
        assert builtin in out.stdout
