"""Ray stays optional: nothing imports it unless --executor ray is asked, and without it that flag fails in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai_server import REPO_ROOT

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.distributed.shards import ShardCache, batch_key, merge_shards
from privasis_bench.distributed.workers import RoundRobinAdapter
from privasis_bench.engine.cache import ResponseCache


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})


def test_importing_the_cli_and_the_distributed_package_does_not_import_ray():
    code = ("import sys, privasis_bench.cli, privasis_bench.distributed.evaluation, privasis_bench.distributed.recipes; "
            "print('ray' in sys.modules)")
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("command", [
    ["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none", "-o", "OUT"],
    ["build-corpus", "-r", "corpus", "-m", "identity", "--judge", "none", "-i", "IN", "-o", "OUT"],
    ["generate", "-r", "synthesis", "-m", "identity", "-n", "2", "-o", "OUT"],
])
def test_executor_ray_without_ray_is_one_line_telling_how_to_install(tmp_path: Path, command: list[str]):
    args = [str(tmp_path / a.lower()) if a in ("OUT", "IN") else a for a in command] + ["--executor", "ray"]
    code = f"import sys; sys.modules['ray'] = None; sys.argv = ['privasis-bench'] + {args!r}; from privasis_bench.cli import main; main()"
    result = _python(code)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [ln for ln in (result.stdout + result.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1 and "pip install 'privasis-bench[ray]'" in lines[0], lines
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.jsonl"))


def test_unknown_executor_is_a_usage_error(tmp_path: Path):
    code = ("import sys; sys.argv = ['privasis-bench', 'run', '-m', 'identity', '-t', 'privasis_sample', '--judge', 'none', "
            f"'-o', {str(tmp_path)!r}, '--executor', 'dask']; from privasis_bench.cli import main; main()")
    result = _python(code)
    assert result.returncode == 2 and "--executor must be one of local, ray, not 'dask'" in result.stdout + result.stderr


def test_shards_are_read_with_the_main_cache_and_merged_into_it(tmp_path: Path):
    main = ResponseCache(tmp_path / "responses.sqlite")
    main.put("k-main", "spec", ChatResult(text="from main"))
    shard = ShardCache(tmp_path / "shards" / f"{batch_key('a', 'b')}.sqlite", main.path)
    assert shard.get("k-main").text == "from main" and shard.get("k-main").cached
    shard.put("k-new", "spec", ChatResult(text="new"))
    assert shard.claim("k-new") and shard.claim("k-new")  # one writer per shard: never waits
    shard.close()
    assert main.get("k-new") is None  # workers never write the main cache
    assert merge_shards(main, tmp_path / "shards") == 1
    assert main.get("k-new").text == "new" and not (tmp_path / "shards").exists()
    main.close()


def test_round_robin_spreads_calls_over_every_base_url():
    class Echo:
        rankable, batched, cacheable, constrains, model = True, False, True, False, "m"

        def __init__(self, name: str) -> None:
            self.name = name

        async def agenerate(self, request: ChatRequest) -> ChatResult:
            return ChatResult(text=self.name)

    import asyncio

    adapter = RoundRobinAdapter([Echo("a"), Echo("b"), Echo("c")])  # type: ignore[list-item]
    request = ChatRequest.user("x", max_tokens=1)
    texts = [asyncio.run(adapter.agenerate(request)).text for _ in range(6)]
    assert texts == ["a", "b", "c", "a", "b", "c"]
