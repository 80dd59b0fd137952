"""Several processes opening one new response cache at the same moment all get a working cache."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from privasis_bench.adapters.base import ChatResult, Usage
from privasis_bench.engine.cache import ResponseCache

OPENERS = 6


def _open_and_store(path: str, start, n: int) -> str:
    start.wait()  # every process opens the brand-new file at once
    try:
        cache = ResponseCache(path)
        cache.put(f"key-{n}", "spec", ChatResult(text=f"answer {n}", finish_reason="stop", usage=Usage(1, 1)))
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the test reports what went wrong in the child
        return f"{type(exc).__name__}: {exc}"


def test_simultaneous_openers_of_a_new_cache_all_succeed(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    path.parent.mkdir()
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Barrier(OPENERS)
        with ctx.Pool(OPENERS) as pool:
            outcomes = pool.starmap(_open_and_store, [(str(path), start, n) for n in range(OPENERS)])
    assert outcomes == ["ok"] * OPENERS
    cache = ResponseCache(path)
    assert all(cache.get(f"key-{n}").text == f"answer {n}" for n in range(OPENERS))
