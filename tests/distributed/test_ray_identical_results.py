"""``run``, ``evaluate`` and ``build-corpus`` with ``--executor ray`` on the session's multi-node cluster (stages on
the worker nodes with ``--ray-resources``, the driver on the head, cache and output on storage every node sees)
give the local executor's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer
from ray_fakes import cli, comparable_results, corpus_inputs, in_process, recipe_reply, run_args
from ray_nodes import WORKER_RESOURCE, check_placement

from privasis_bench.pipeline.lock import LOCK_NAME

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a real multi-node Ray cluster on this machine
ON_WORKERS = ("--ray-resources", f"{WORKER_RESOURCE}=1")


def test_run_on_ray_writes_the_local_results(ray_cluster, ray_address: str, tmp_path: Path, monkeypatch, capsys):
    with FakeOpenAIServer(delay=0.01) as server:
        local = in_process(monkeypatch, capsys, *run_args(server.base_url, tmp_path / "local", tmp_path / "cache-local"))
        assert local.returncode == 0, local.stderr[-2000:]
        calls_local = sum(server.received.values())
        distributed = cli(*run_args(server.base_url, tmp_path / "ray", tmp_path / "cache-ray", "--executor", "ray",
                                    "--ray-address", ray_address, "--ray-batch-size", "3", *ON_WORKERS))
        assert distributed.returncode == 0, distributed.stderr[-2000:]
        assert sum(server.received.values()) == 2 * calls_local  # each request once per run (separate caches)
    check_placement(ray_cluster, distributed.stderr, {"sanitize", "judge"})
    assert not list((tmp_path / "cache-ray").rglob("ray-shards/*/*.sqlite")), "every shard is merged"
    a, b = tmp_path / "local" / "privasis_sample", tmp_path / "ray" / "privasis_sample"
    assert (a / "samples.jsonl").read_bytes() == (b / "samples.jsonl").read_bytes()
    assert (a / "sanitized.jsonl").read_bytes() == (b / "sanitized.jsonl").read_bytes()
    assert comparable_results(a) == comparable_results(b)
    ray_results = json.loads((b / "results.json").read_text())
    assert ray_results["counts"]["verdicts_reused_from_checkpoint"] == ray_results["counts"]["judged_records"]
    # the workers' calls and tokens are counted as this run's spend, the same as the local run's
    local_usage = json.loads((a / "results.json").read_text())["usage"]
    for role in ("model", "judge"):
        spent = {k: ray_results["usage"][role][k] for k in ("batches", "prompt_tokens", "completion_tokens", "failed")}
        assert spent == {k: local_usage[role][k] for k in spent}, role
        assert spent["batches"] > 0
    ledger = json.loads((b / "usage.json").read_text())
    assert ledger["invocations"][-1]["usage"]["judge"]["batches"] == local_usage["judge"]["batches"]


def test_build_corpus_on_ray_writes_the_local_files(ray_address: str, tmp_path: Path, monkeypatch, capsys):
    inputs = corpus_inputs(tmp_path / "in.jsonl", n=6)
    with FakeOpenAIServer(reply=recipe_reply) as server:
        def build(out: str, *extra: str):
            run = cli if "--executor" in extra else lambda *a: in_process(monkeypatch, capsys, *a)
            return run("build-corpus", "-r", "corpus", "-m", "openai:fake-model", "--model-args", f"base_url={server.base_url}",
                       "--judge", f"openai:fake-judge,base_url={server.base_url}", "-i", str(inputs), "-o", str(tmp_path / out),
                       "--cache-dir", str(tmp_path / f"cache-{out}"), "--batch-size", "2", "--no-progress", *extra)

        local = build("local")
        distributed = build("ray", "--executor", "ray", "--ray-address", ray_address, *ON_WORKERS)
    assert local.returncode == distributed.returncode, (local.stdout[-1500:], distributed.stderr[-2000:])
    names = sorted(p.name for p in (tmp_path / "local").iterdir() if p.name != LOCK_NAME)  # the lock names its holder
    assert "benchmark.jsonl" in names and sorted(p.name for p in (tmp_path / "ray").iterdir() if p.name != LOCK_NAME) == names
    rows = (tmp_path / "local" / "benchmark.jsonl").read_text().splitlines()
    assert len(rows) >= 3, "the fake recipe model should let most rows through"
    for name in names:
        a, b = tmp_path / "local" / name, tmp_path / "ray" / name
        if name.endswith(".jsonl"):
            assert _without_usage(a) == _without_usage(b), name
        elif name.endswith(".yaml"):
            # task names follow the directory name; the include names the task folder of whichever copy of the package
            # ran (the installed one in this process, the checkout in the Ray driver's), so only its file is compared
            ya, yb = (_neutral_include(p.read_text()) for p in (a, b))
            assert ya.replace("local", "ray") == yb, name
        else:
            assert a.read_bytes() == b.read_bytes(), name


def _neutral_include(text: str) -> str:
    """The task YAML with its ``include:`` path cut to the file name."""
    return "\n".join(f"include: {Path(line.split(':', 1)[1].strip()).name}" if line.startswith("include:") else line
                     for line in text.splitlines())


def _without_usage(path: Path) -> list[dict]:
    """Rows in file order without their token usage.

    Usage is spend accounting, not content: tokens of answers served from the cache are not counted, and a local
    run finds in the cache a request an earlier batch already made, which batches running side by side cannot.
    """
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row.pop("usage", None)
        (row.get("pipeline") or {}).pop("usage", None)
    return rows


def test_evaluate_on_ray_writes_the_local_results(ray_cluster, ray_address: str, tmp_path: Path, monkeypatch, capsys):
    with FakeOpenAIServer() as server:
        source = in_process(monkeypatch, capsys, *run_args(server.base_url, tmp_path / "src", tmp_path / "cache-src", limit=4))
        assert source.returncode == 0, source.stderr[-2000:]
        predictions = tmp_path / "src" / "privasis_sample" / "sanitized.jsonl"

        def evaluate(out: str, *extra: str):
            run = cli if "--executor" in extra else lambda *a: in_process(monkeypatch, capsys, *a)
            return run("evaluate", "-p", str(predictions), "--judge", "openai:fake-judge", "--judge-args",
                       f"base_url={server.base_url}", "-t", "privasis_sample", "--limit", "4", "-o", str(tmp_path / out),
                       "--cache-dir", str(tmp_path / f"cache-{out}"), "--no-progress", "--max-off-label", "100000",
                       "--bootstrap-samples", "200", *extra)

        local, distributed = evaluate("local"), evaluate("ray", "--executor", "ray", "--ray-address", ray_address, *ON_WORKERS)
    assert local.returncode == distributed.returncode == 0, distributed.stderr[-2000:]
    check_placement(ray_cluster, distributed.stderr, {"judge"})
    a, b = tmp_path / "local" / "privasis_sample", tmp_path / "ray" / "privasis_sample"
    assert (a / "samples.jsonl").read_bytes() == (b / "samples.jsonl").read_bytes()
    assert comparable_results(a) == comparable_results(b)
