"""``--executor ray`` runs a family registered from the test tree (tests/toy_family): the model's rewrites on Ray,
its attacker role in the local pass that scores them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real multi-node Ray cluster on this machine


#: A driver process that registers the toy family with one line, then runs the CLI (a Ray driver runs in a process of
#: its own, as every other Ray test's does: ray_fakes.cli).
DRIVER = ("import sys; from privasis_bench.tasks.family import FAMILIES; "
          "FAMILIES.register('toy', 'tests.toy_family.family:FAMILY'); "
          "from privasis_bench.cli import main; sys.argv = ['privasis-bench', *sys.argv[1:]]; main()")


@pytest.mark.timeout(600)
def test_a_registered_familys_rewrites_run_on_ray(ray_address: str, tmp_path: Path):
    import os
    import subprocess
    import sys

    from ray_fakes import REPO_ROOT
    from ray_nodes import LOOPBACK_ENV

    from tests.pipeline.test_family_plugin import rewrite
    from tests.toy_family.family import TASK

    env = {**os.environ, **LOOPBACK_ENV, "OPENAI_API_KEY": "sk-test",
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    with FakeOpenAIServer(reply=rewrite) as server:
        proc = subprocess.run([sys.executable, "-c", DRIVER, "run", "-m", f"openai:writer,base_url={server.base_url}",
                               "-t", TASK, "--role", f"attacker=openai:guesser,base_url={server.base_url}",
                               "-o", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                               "--executor", "ray", "--ray-address", ray_address],
                              capture_output=True, text=True, env=env, timeout=540)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    results = json.loads((tmp_path / "run" / "toy_cities" / "results.json").read_text())
    assert results["metrics"]["protected"] == 0.75
    assert len((tmp_path / "run" / "toy_cities" / "sanitized.jsonl").read_text().splitlines()) == 4
