"""A third-party adapter package registers a provider through the entry-point group, without a fork."""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import importlib.util
import os
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
    """The example plugin, installed into a temporary folder put on ``sys.path`` (and on ``PYTHONPATH`` for the
    subprocesses of the tests), never into the user's environment; both are restored when the module is done.

    It is built from a copy, so setuptools' build/ and egg-info directories never land in the repository. An
    environment that already has it installed (an older run of this suite) is used as it is.
    """
    target = None
    if importlib.util.find_spec("privasis_example_adapter") is None:
        source = tmp_path_factory.mktemp("plugin") / "example_adapter"
        target = tmp_path_factory.mktemp("plugin-site")
        shutil.copytree(PLUGIN_DIR, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--disable-pip-version-check",
               "--target", str(target)]
        if importlib.util.find_spec("setuptools") is not None:
            cmd.append("--no-build-isolation")  # offline-friendly: build with the setuptools already here
        proc = subprocess.run(cmd + [str(source)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"pip install failed:\n{proc.stdout}\n{proc.stderr}"
        sys.path.insert(0, str(target))
        importlib.invalidate_caches()
    old_pythonpath = os.environ.get("PYTHONPATH")
    if target is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(target), old_pythonpath) if p)
    try:
        assert importlib.util.find_spec("privasis_example_adapter") is not None
        yield target
    finally:
        if target is not None:
            sys.path.remove(str(target))
            sys.modules.pop("privasis_example_adapter", None)
            importlib.invalidate_caches()
            if old_pythonpath is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = old_pythonpath


def test_the_plugin_is_never_installed_into_the_environment(installed_plugin):
    if installed_plugin is None:
        pytest.skip("this environment already had the plugin installed (by an older run of the suite)")
    site = [p for p in sys.path if p != str(installed_plugin)]
    dist = [d for d in importlib.metadata.distributions(path=site) if d.metadata["Name"] == "privasis-example-adapter"]
    assert dist == [] and str(installed_plugin) in sys.path


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
