"""A detached batch is never dropped silently (issue 51, item 5): after ``--batch-detach``, a re-run that would not
collect the batch (no ``--batch`` for the role, or ``--no-cache``) stops with one line naming the role and how to
collect or abandon it, instead of asking everything again live; ``--batch-abandon`` drops it explicitly, saying so;
the same command collects it, paying nothing twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_main import run_main
from fake_batch_server import FakeBatchServer
from fake_openai_server import write_tiny_task

pytest.importorskip("openai")

FAST = ["--batch-quiet", "0.2", "--batch-poll", "0.05", "--batch-max-wait", "5"]


def _run(server: FakeBatchServer, yaml: Path, out: Path, cache: Path, monkeypatch, capsys, *extra: str):
    return run_main(
        ["run", "--model", "openai:fake-model", "--model-args", f"base_url={server.base_url}", "--tasks", str(yaml),
         "--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}", "--output", str(out),
         "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20", "--max-off-label", "100000",
         "--retry-base-delay", "0.01", *extra], monkeypatch, capsys)


def _detach(server: FakeBatchServer, yaml: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys,
                        "--batch", "model,judge", "--batch-detach", *FAST)
    assert code == 0 and "pending" in se, so + se
    assert len(server.batches) == 1


@pytest.mark.parametrize("extra", [[], ["--no-cache"], ["--batch", "judge"]])
def test_a_rerun_that_would_not_collect_a_detached_batch_stops_with_one_line(tmp_path: Path, extra: list[str],
                                                                            monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    with FakeBatchServer(latency=60.0) as server:
        _detach(server, yaml, tmp_path, monkeypatch, capsys)
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys, *extra, *FAST)
        assert code == 2, so + se
        lines = se.strip().splitlines()
        assert len(lines) == 1 and "model" in lines[0] and "pending" in lines[0], se
        assert "--batch model" in lines[0] and "--batch-abandon" in lines[0]
        assert server.live_calls == 0 and not server.paid  # nothing asked again


def test_batch_abandon_drops_it_explicitly_and_the_same_command_collects_it(tmp_path: Path, monkeypatch,
                                                                            capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=4)
    with FakeBatchServer(latency=60.0) as server:
        _detach(server, yaml, tmp_path, monkeypatch, capsys)
        server.latency = 0.0
        code, so, se = _run(server, yaml, tmp_path / "out", tmp_path / "c", monkeypatch, capsys, "--batch", "model,judge",
                            *FAST)
        assert code == 0, so + se
        assert set(server.paid.values()) == {1}  # collected, not asked again
    with FakeBatchServer(latency=60.0) as server:
        code, so, se = _run(server, yaml, tmp_path / "o2", tmp_path / "c2", monkeypatch, capsys,
                            "--batch", "model,judge", "--batch-detach", *FAST)
        assert code == 0, so + se
        code, so, se = _run(server, yaml, tmp_path / "o2", tmp_path / "c2", monkeypatch, capsys, "--batch-abandon")
        assert code == 0, so + se
        assert "abandoned 1 batch(es)" in se and "bills them all the same" in se, se
        assert server.live_calls > 0  # asked live, as the user chose
