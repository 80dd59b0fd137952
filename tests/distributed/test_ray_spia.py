"""``--executor ray`` runs a SPIA task (registered through its entry point, like any plug-in family): the model's
rewrites on Ray, the adversary and the matcher in the local pass that scores them; the numbers and the rewrites are
those of the same run without Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real multi-node Ray cluster on this machine


@pytest.mark.timeout(600)
def test_a_spia_run_on_ray_equals_the_local_run(ray_cluster, ray_address: str, tmp_path: Path):
    from ray_fakes import REPO_ROOT
    from ray_nodes import LOOPBACK_ENV, WORKER_RESOURCE, check_placement

    from tests.spia.spia_fakes import reply

    env = {**os.environ, **LOOPBACK_ENV, "OPENAI_API_KEY": "sk-test",
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    with FakeOpenAIServer(reply=reply) as server:
        url = server.base_url
        common = ["run", "-m", f"openai:writer,base_url={url}", "-t", "spia_sample",
                  "--role", f"adversary=openai:adversary,base_url={url}", "--role", f"matcher=openai:matcher,base_url={url}",
                  "--no-progress", "--bootstrap-samples", "50"]
        runs = {}
        for name, extra in (("ray", ["--executor", "ray", "--ray-address", ray_address, "--ray-batch-size", "2",
                                      "--ray-resources", f"{WORKER_RESOURCE}=1"]), ("local", [])):
            # the Ray driver runs in a process of its own, as every other Ray test's does (ray_fakes.cli)
            proc = subprocess.run([sys.executable, "-m", "privasis_bench", *common, "-o", str(tmp_path / name),
                                   "--cache-dir", str(tmp_path / f"cache-{name}"), *extra],
                                  capture_output=True, text=True, env=env, timeout=540)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
            runs[name] = tmp_path / name / "spia_sample"
            if name == "ray":  # the rewrites ran on the worker nodes, the driver (which scores) on the head
                check_placement(ray_cluster, proc.stderr, {"sanitize"})
    results = {name: json.loads((folder / "results.json").read_text()) for name, folder in runs.items()}
    assert results["ray"]["metrics"]["scored_documents"] == 5
    for key in ("cpr", "ipr", "per_tag_cpr", "attributes", "ci"):
        assert results["ray"]["metrics"][key] == results["local"]["metrics"][key], key
    outputs = {name: sorted(json.loads(x)["output"] for x in (folder / "sanitized.jsonl").read_text().splitlines())
               for name, folder in runs.items()}
    assert len(outputs["ray"]) == 5 and outputs["ray"] == outputs["local"]
