"""A rejected key on a Ray worker stops the command with the local executor's one line (exit 2, key scrubbed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai_server import Action, FakeOpenAIServer
from ray_fakes import cli

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real local Ray cluster


def test_rejected_key_on_a_worker_is_one_line_and_exit_2(ray_address: str, tmp_path: Path):
    with FakeOpenAIServer(script=lambda prompt, seen: Action("401")) as server:
        result = cli("run", "-m", "openai:x", "--model-args", f"base_url={server.base_url},api_key=sk-secret-123", "--judge",
                     "none", "-t", "privasis_sample", "--limit", "2", "-o", str(tmp_path / "out"), "--cache-dir",
                     str(tmp_path / "cache"), "--no-progress", "--executor", "ray", "--ray-address", ray_address)
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "HTTP 401" in errors[0], result.stderr[-2000:]
    assert "sk-secret-123" not in result.stdout + result.stderr
