"""How much the execution engine costs per call.

Prints requests per second for three paths:

1. an in-memory adapter that answers instantly (pure engine overhead: tasks, pacing checks, counters);
2. the ``openai`` adapter against the local fake chat-completions server used by the fault tests
   (engine + SDK + HTTP on localhost), at several concurrency levels;
3. the same requests again, answered from the SQLite response cache (no call at all).

Usage: ``python benchmarks/engine_overhead.py [--requests 400]``. Numbers depend on the machine; this is
a measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_openai_server import FakeOpenAIServer  # noqa: E402

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult, Usage  # noqa: E402
from privasis_bench.adapters.registry import build_adapter  # noqa: E402
from privasis_bench.adapters.spec import ModelSpec  # noqa: E402
from privasis_bench.engine.cache import ResponseCache  # noqa: E402
from privasis_bench.engine.executor import Engine  # noqa: E402


class Instant(Adapter):
    provider = "instant"

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        return ChatResult(text=request.messages[0][1], finish_reason="stop", usage=Usage(1, 1))


def _rate(label: str, engine: Engine, requests: list[ChatRequest]) -> None:
    start = time.perf_counter()
    results = engine.run(requests, desc=label)
    elapsed = time.perf_counter() - start
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    cached = sum(r.cached for r in results)
    print(f"{label:<40} {len(requests) / elapsed:10.1f} req/s  ({elapsed:.2f} s, {cached} cached)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    requests = [ChatRequest.user(f"benchmark prompt number {i}", max_tokens=16) for i in range(args.requests)]

    with Engine(Instant("x"), ModelSpec.parse("instant:x"), role="model", cache=None, progress=False, concurrency=16) as e:
        _rate("in-memory adapter, no cache", e, requests)

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        for concurrency in (1, 4, 16):
            # The extra "c" argument only makes the cache key differ per level, so every level really
            # calls the server; the adapter itself is built without it.
            spec = ModelSpec.parse("openai:fake", {"base_url": server.base_url, "c": concurrency})
            cache = ResponseCache(Path(tmp) / "cache.sqlite")
            with Engine(build_adapter(ModelSpec.parse("openai:fake", {"base_url": server.base_url})), spec, role="model",
                        cache=cache, progress=False, concurrency=concurrency) as engine:
                _rate(f"openai adapter -> local server, conc {concurrency}", engine, requests)
                _rate("  same requests from the cache", engine, requests)


if __name__ == "__main__":
    main()
