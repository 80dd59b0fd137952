"""A Ray worker killed mid-run: the re-run finishes with the local results and pays only for what was in flight."""

from __future__ import annotations

import os
import signal
import threading
from collections import Counter
from pathlib import Path

import pytest

from fake_openai_server import FakeOpenAIServer, reply_for
from ray_fakes import cli, comparable_results, popen, run_args

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real local Ray cluster
psutil = pytest.importorskip("psutil")

ANSWER_FIRST = 5  # requests answered at once; every later one waits until the test opens the gate


def _callers(port: int, exclude: int) -> list[int]:
    """Pids of this test's descendant processes (Ray workers) with a connection open to the fake server."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.pid != exclude and any(c.raddr and c.raddr.port == port for c in proc.net_connections(kind="tcp")):
                found.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_killed_worker_costs_at_most_its_requests_in_flight(ray_address: str, tmp_path: Path):
    gate, armed, lock = threading.Event(), threading.Event(), threading.Lock()
    answered = Counter()

    def gated_reply(prompt: str) -> str:
        """Once armed, the first ANSWER_FIRST replies go out at once, later ones wait for the gate."""
        if armed.is_set():
            with lock:
                answered["n"] += 1
                wait = answered["n"] > ANSWER_FIRST
            if wait:
                gate.wait(120)
        return reply_for(prompt)

    with FakeOpenAIServer(reply=gated_reply) as server:
        local = cli(*run_args(server.base_url, tmp_path / "local", tmp_path / "cache-local"))
        assert local.returncode == 0, local.stderr[-2000:]
        paid_locally = Counter(server.received)
        server.received.clear()
        server.served.clear()
        armed.set()
        args = run_args(server.base_url, tmp_path / "ray", tmp_path / "cache-ray", "--executor", "ray", "--ray-address",
                        ray_address, "--ray-batch-size", "2", "--ray-workers", "2", "--concurrency", "2")
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        driver = popen(*args)
        try:
            assert server.wait_for(lambda s: sum(s.received.values()) >= ANSWER_FIRST + 2, timeout=180), "the run stalled"
            victims = _callers(port, exclude=driver.pid)
            assert victims, "no Ray worker is talking to the server"
            with server.lock:
                in_flight = {p for p, n in server.received.items() if n > server.served[p]}
            os.kill(victims[0], signal.SIGKILL)
        finally:
            gate.set()
        _, first_err = driver.communicate(timeout=600)
        rerun = cli(*args)  # whether or not Ray already finished the run by retrying the batch elsewhere
        assert rerun.returncode == 0, (first_err[-1500:], rerun.stderr[-2000:])
        paid = Counter(server.received)

    assert in_flight, "the kill should have found requests in flight"
    a, b = tmp_path / "local" / "privasis_sample", tmp_path / "ray" / "privasis_sample"
    assert (a / "samples.jsonl").read_bytes() == (b / "samples.jsonl").read_bytes()
    assert comparable_results(a) == comparable_results(b)
    assert set(paid) == set(paid_locally)
    over = {p[:60]: (paid[p], paid_locally[p]) for p in paid if paid[p] > paid_locally[p] + (p in in_flight)}
    assert not over, f"requests paid more than once beyond those in flight at the kill: {over}"
