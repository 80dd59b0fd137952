"""``generate --executor ray`` (drafts ahead on a map_batches stage, batches finished by an actor) writes the local files."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections import Counter
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer
from ray_fakes import cli, in_process, popen, synthesis_reply

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real local Ray cluster


def _rows(path: Path) -> list[dict]:
    """Rows in file order without their token usage (spend accounting, not content)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.pop("usage", None)
    return rows


def test_generate_on_ray_writes_the_local_files_pays_for_no_extra_draft_and_resumes_from_the_cache(
        ray_address: str, tmp_path: Path, monkeypatch, capsys):
    with FakeOpenAIServer(reply=synthesis_reply) as server:
        def generate(out: str, *extra: str, cache: str | None = None):
            before = sum(server.received.values())
            run = cli if "--executor" in extra else lambda *a: in_process(monkeypatch, capsys, *a)
            done = run("generate", "-r", "synthesis", "-m", "openai:fake-model", "--model-args", f"base_url={server.base_url}",
                       "-n", "5", "-o", str(tmp_path / out), "--cache-dir", str(tmp_path / f"cache-{cache or out}"),
                       "--batch-size", "2", "--no-progress", *extra)
            return done, sum(server.received.values()) - before

        on_ray = ("--executor", "ray", "--ray-address", ray_address)
        (local, local_calls), (distributed, ray_calls) = generate("local"), generate("ray", *on_ray)
        # a new output directory with the same cache: every answer comes from the cache
        again, again_calls = generate("ray-again", *on_ray, cache="ray")
    assert local.returncode == 0, local.stdout[-2000:] + local.stderr[-2000:]
    assert distributed.returncode == 0, distributed.stdout[-2000:] + distributed.stderr[-3000:]
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    a, b = tmp_path / "local", tmp_path / "ray"
    corpus = _rows(a / "corpus.jsonl")
    failures = [json.loads(line) for line in (a / "failures.jsonl").read_text().splitlines()]
    assert len(corpus) == 5 and failures, "some drafts are refused, so failed ids are replaced by later ones"
    assert _rows(b / "corpus.jsonl") == corpus
    assert (b / "failures.jsonl").read_text() == (a / "failures.jsonl").read_text()
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    # no two rows share a draft prompt here, so the same calls are made: drafts ahead are only of ids the run tries
    assert ray_calls == local_calls
    shards = tmp_path / "cache-ray" / "ray-shards"
    assert not shards.exists() or not any(shards.rglob("*.sqlite")), "the shards are merged into the main cache"
    assert again_calls == 0 and _rows(tmp_path / "ray-again" / "corpus.jsonl") == corpus


def test_generate_survives_its_finishing_actor_being_killed(ray_address: str, tmp_path: Path, monkeypatch, capsys):
    psutil = pytest.importorskip("psutil")
    first_revision, gate = threading.Event(), threading.Event()

    def gated_reply(prompt: str) -> str:
        """From the first revision request on (made by the finishing actor), every answer waits for the kill."""
        if prompt.startswith("Here is a document:"):
            first_revision.set()
        if first_revision.is_set():
            gate.wait(120)
        return synthesis_reply(prompt)

    with FakeOpenAIServer(reply=synthesis_reply) as server:
        args = ["generate", "-r", "synthesis", "-m", "openai:fake-model", "--model-args", f"base_url={server.base_url}",
                "-n", "3", "--batch-size", "2", "--no-progress"]
        local = in_process(monkeypatch, capsys, *args, "-o", str(tmp_path / "local"), "--cache-dir", str(tmp_path / "cache-local"))
        assert local.returncode == 0, local.stderr[-2000:]
        paid_locally = Counter(server.received)
        server.received.clear()
        server.served.clear()
        server.reply = gated_reply
        driver = popen(*args, "-o", str(tmp_path / "ray"), "--cache-dir", str(tmp_path / "cache-ray"), "--executor", "ray",
                       "--ray-address", ray_address)
        try:
            assert first_revision.wait(240), "the finishing actor never asked for a revision"
            actors = [p for p in psutil.Process().children(recursive=True) if _is_finish_actor(p)]
            assert len(actors) == 1, actors  # Ray titles an actor's process ray::<class name>
            os.kill(actors[0].pid, signal.SIGKILL)
            psutil.wait_procs(actors, timeout=60)
            with server.lock:  # nothing has been answered since the first revision arrived
                in_flight = {p for p, n in server.received.items() if n > server.served[p]}
        finally:
            gate.set()
        out, err = driver.communicate(timeout=600)
        paid = Counter(server.received)
    assert driver.returncode == 0, (out[-1500:], err[-3000:])  # Ray restarts the actor and runs the batch again
    assert _rows(tmp_path / "ray" / "corpus.jsonl") == _rows(tmp_path / "local" / "corpus.jsonl")
    assert any(p.startswith("Here is a document:") for p in in_flight)
    over = {p[:60]: (paid[p], paid_locally[p]) for p in paid if paid[p] > paid_locally[p] + (p in in_flight)}
    assert not over, f"requests paid more than once beyond those in flight at the kill: {over}"


def _is_finish_actor(proc) -> bool:
    try:
        return "FinishWorker" in " ".join(proc.cmdline())
    except Exception:  # noqa: BLE001 - gone or not ours to read
        return False
