"""``--executor ray`` runs a family registered from the test tree (tests/toy_family): the model's rewrites on Ray,
its attacker role in the local pass that scores them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import FakeOpenAIServer

from privasis_bench.tasks.family import FAMILIES

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real multi-node Ray cluster on this machine


@pytest.fixture
def toy():
    FAMILIES.register("toy", "tests.toy_family.family:FAMILY")
    yield
    FAMILIES.unregister("toy")


def test_a_registered_familys_rewrites_run_on_ray(toy, ray_address: str, tmp_path: Path, monkeypatch, capsys):
    from ray_nodes import LOOPBACK_ENV

    from tests.pipeline.test_family_plugin import rewrite
    from tests.toy_family.family import TASK_FILE

    for key, value in LOOPBACK_ENV.items():  # the in-process driver keeps to 127.0.0.1, as ray_fakes.cli's does
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(reply=rewrite) as server:
        code, out, err = run_main(["run", "-m", f"openai:writer,base_url={server.base_url}", "-t", str(TASK_FILE),
                                   "--role", f"attacker=openai:guesser,base_url={server.base_url}",
                                   "-o", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                                   "--executor", "ray", "--ray-address", ray_address], monkeypatch, capsys)
    assert code == 0, out + err
    results = json.loads((tmp_path / "run" / "toy_cities" / "results.json").read_text())
    assert results["metrics"]["protected"] == 0.75
    assert len((tmp_path / "run" / "toy_cities" / "sanitized.jsonl").read_text().splitlines()) == 4
