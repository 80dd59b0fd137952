"""Ray executor values are checked at start, before anything is written or any worker starts: one line naming the
option and what is accepted, exit 2 (never a hang on an address nothing listens at, nor on GPUs no node has)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from cli_main import run_main

from privasis_bench.distributed.cluster import RayOptions, check_gpus

pytest.importorskip("ray")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


@pytest.mark.parametrize("extra, option, accepted", [
    (["--ray-resources", "pb=nan"], "--ray-resources", "finite amount > 0"),
    (["--ray-resources", "pb=inf"], "--ray-resources", "finite amount > 0"),
    (["--ray-base-urls", "notaurl"], "--ray-base-urls", "http(s) URL"),
    (["--ray-judge-base-urls", "file:///etc/passwd"], "--ray-judge-base-urls", "http(s) URL"),
    (["--ray-base-urls", "http://ok:8000/v1,http://host:99999"], "--ray-base-urls", "http(s) URL"),
    (["--ray-address", "nonsense"], "--ray-address", "HOST:PORT"),
    (["--ray-address", "CLOSED"], "--ray-address 127.0.0.1:", "no Ray cluster answers there"),
])
def test_bad_ray_values_are_refused_at_start_in_one_line(tmp_path: Path, monkeypatch, capsys, extra, option, accepted):
    extra = [f"127.0.0.1:{_closed_port()}" if x == "CLOSED" else x for x in extra]
    out = tmp_path / "out"
    code, stdout, stderr = run_main(["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none", "--limit", "2",
                                     "--no-progress", "-o", str(out), "--executor", "ray", *extra], monkeypatch, capsys)
    lines = [ln for ln in (stdout + stderr).splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: {option}") and accepted in lines[0], lines
    assert not out.exists()


class _Nodes:
    def __init__(self, *gpus: float) -> None:
        self.table = [{"NodeID": str(i), "Alive": True, "Resources": {"CPU": 4.0, **({"GPU": g} if g else {})}}
                      for i, g in enumerate(gpus)]

    def nodes(self) -> list[dict]:
        return self.table


def test_gpus_no_node_has_are_refused_before_the_stages_start():
    check_gpus(_Nodes(0, 2), RayOptions(gpus_per_worker=1))
    check_gpus(_Nodes(0), RayOptions(gpus_per_worker=0))
    with pytest.raises(Exception) as err:
        check_gpus(_Nodes(0, 0), RayOptions(gpus_per_worker=1))
    assert str(err.value).startswith("--ray-gpus-per-worker 1: no node of the cluster has that many GPUs")
