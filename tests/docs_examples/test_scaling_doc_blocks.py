"""docs/scaling.md's two shell blocks, run with a local fake model server (tests/fake_openai_server.py) standing in
for the one at 10.0.0.7, in a fresh folder.

Stated substitutions (also in tests/docs_examples/test_doc_examples.py BLOCKS): ``base_url=http://10.0.0.7:8000/v1`` -> the fake
server, which also answers the task's default judge (``openai:gpt-oss-120b``) through ``OPENAI_BASE_URL`` and a
placeholder key; ``-t privasis_vanilla`` reads the bundled sample records (``--data-files``: the vanilla split
downloads from the hub), ``--limit 2``. The several-machines block: the two ``ray start`` lines start a head and one worker node on this
machine, ``HEAD_IP:6379`` -> ``127.0.0.1:<a free port>``, each with the flags two clusters on one machine need
(``--node-ip-address 127.0.0.1``, free ports where Ray's are fixed, no dashboard, the head's own ``--temp-dir``);
``/shared/...`` -> folders here; ``--ray-workers 8`` -> ``--ray-workers 1`` (two actors in all on this small machine).
The nodes are stopped by their pids (``ray stop`` would stop every Ray node on the machine).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from doc_blocks import REPO, block_commands
from fake_openai_server import FakeOpenAIServer, reply_for
from ray_nodes import LOOPBACK_ENV, WORKER_RESOURCE, free_port

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real Ray cluster on this machine

PAGE = "docs/scaling.md"
MODEL_URL = "http://10.0.0.7:8000/v1"
NODE_MARKER = "PRIVASIS_TEST_RAY_NODES"  # set in the environment of the nodes this test starts


def _reply(prompt: str) -> str:
    """The fake model's usual rewrite, and a label the judge accepts for its two labelled questions."""
    if prompt.startswith("Two responses tried to recover"):
        return "neither"
    if prompt.startswith("Decide whether a piece of information is present"):
        return "YES"
    return reply_for(prompt)


def _env(cwd: Path, server: FakeOpenAIServer) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, **LOOPBACK_ENV, "PYTHONPATH": path, "PRIVASIS_BENCH_CACHE_DIR": str(cwd / ".cache"),
            "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-not-a-secret", "RAY_USAGE_STATS_ENABLED": "0",
            NODE_MARKER: str(cwd)}


def _privasis_bench(command: str, server: FakeOpenAIServer, cwd: Path) -> subprocess.CompletedProcess:
    assert MODEL_URL in command and " -t privasis_vanilla " in command
    argv = [sys.executable, "-m", "privasis_bench", *shlex.split(command.replace(MODEL_URL, server.base_url))[1:],
            "--data-files", str(REPO / "tasks" / "sample" / "privasis_sample.jsonl"), "--limit", "2", "--no-progress"]
    return subprocess.run(argv, cwd=cwd, env=_env(cwd, server), capture_output=True, text=True, timeout=900)


def _check_run(task_dir: Path, server: FakeOpenAIServer) -> None:
    results = json.loads((task_dir / "results.json").read_text(encoding="utf-8"))
    assert results["complete"] and results["counts"]["judged_records"] >= 1
    assert {b["model"] for b in server.bodies} == {"my-model", "gpt-oss-120b"}  # the block's model and the task's judge


def test_the_one_machine_block_starts_a_local_cluster(tmp_path: Path) -> None:
    pytest.importorskip("ray.data")
    (command,) = block_commands(PAGE, "# one machine: a local cluster is started for the command")
    with FakeOpenAIServer(reply=_reply) as server:
        try:
            proc = _privasis_bench(command, server, tmp_path)
        finally:
            _stop_nodes(str(tmp_path))  # anything the command's local cluster left behind
        assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
        _check_run(tmp_path / "runs/big/privasis_vanilla", server)
    assert "ray: driver on node" in proc.stderr


def _node_pids(marker: str) -> list[int]:
    """Pids of the processes started with ``NODE_MARKER=marker`` in their environment: the nodes' own and every
    process they start (Ray renames its workers and agents, so their command lines name nothing of ours)."""
    import psutil

    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if proc.environ().get(NODE_MARKER) == marker:
                found.append(proc.info["pid"])
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def _stop_nodes(marker: str) -> None:
    import psutil

    procs = []
    for pid in _node_pids(marker):
        try:
            procs.append(psutil.Process(pid))
            procs[-1].terminate()
        except psutil.NoSuchProcess:
            continue
    _, alive = psutil.wait_procs(procs, timeout=20)
    for proc in alive:
        proc.kill()


def _ray_start(command: str, port: int, temp_dir: Path) -> list[str]:
    argv = shlex.split(command.replace("HEAD_IP:6379", f"127.0.0.1:{port}").replace("--port 6379", f"--port {port}"))
    argv[0] = str(Path(sys.executable).parent / "ray")
    argv += ["--node-ip-address", "127.0.0.1", "--dashboard-agent-listen-port", str(free_port()),
             "--dashboard-agent-grpc-port", str(free_port()), "--metrics-export-port", str(free_port()),
             "--runtime-env-agent-port", str(free_port()), "--disable-usage-stats",
             "--object-store-memory", str(80 * 1024 * 1024)]
    if "--head" in argv:
        argv += ["--include-dashboard", "false", "--ray-client-server-port", str(free_port()), "--temp-dir", str(temp_dir)]
    return argv


def test_the_several_machines_block_on_a_local_head_and_worker(tmp_path: Path) -> None:
    pytest.importorskip("ray.data")
    pytest.importorskip("psutil")
    head, worker, run = block_commands(PAGE, "ray start --head --port 6379 --num-cpus 2")
    assert f"'{{\"{WORKER_RESOURCE}\": 8}}'" in worker and "--ray-workers 8" in run
    port, temp_dir = free_port(), Path(f"/tmp/pb-ray-{os.getpid()}-{time.time_ns() % 10**6}")  # short: a socket path
    run = run.replace("HEAD_IP:6379", f"127.0.0.1:{port}").replace("/shared/", f"{tmp_path}/shared/")
    run = run.replace("--ray-workers 8", "--ray-workers 1")
    with FakeOpenAIServer(reply=_reply) as server:
        env = _env(tmp_path, server)
        try:
            for command in (head, worker):
                # without the driver's loopback switch (it also refuses worker nodes), and with a HOME of their own:
                # a head started by `ray start` turns token authentication on when ~/.ray/auth_token exists, a worker
                # node does not send it
                node_env = {k: v for k, v in env.items() if k not in LOOPBACK_ENV}
                node_env.update({"HOME": str(tmp_path / "home"), NODE_MARKER: temp_dir.name})
                proc = subprocess.run(_ray_start(command, port, temp_dir), cwd=tmp_path, env=node_env, capture_output=True,
                                      text=True, timeout=300)
                assert proc.returncode == 0, f"{command}: exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
            proc = _privasis_bench(run, server, tmp_path)
            assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
            _check_run(tmp_path / "shared/runs/big/privasis_vanilla", server)
        finally:
            _stop_nodes(temp_dir.name)
            shutil.rmtree(temp_dir, ignore_errors=True)
    assert not _node_pids(temp_dir.name)
    placed = next(ln for ln in proc.stderr.splitlines() if ln.startswith("ray: driver on node "))
    assert "sanitize on 1 node" in placed and "judge on 1 node" in placed, placed
    assert list((tmp_path / "shared/pb-cache").iterdir())  # the cache went where the command said
