"""The persistent response cache: round trips, failures never stored, durable across processes."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.cache import CACHE_FILE_NAME, ResponseCache, default_cache_dir


def _req(text: str, **kw) -> ChatRequest:
    return ChatRequest.user(text, max_tokens=kw.pop("max_tokens", 32), **kw)


def test_round_trip_marks_cached(tmp_path: Path) -> None:
    spec = ModelSpec.parse("openai:m")
    key = _req("hello").cache_key(spec.key())
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.get(key) is None
        ok = ChatResult(text="hi", finish_reason="stop", usage=Usage(3, 1), attempts=2)
        assert cache.put(key, spec.key(), ok)
        got = cache.get(key)
    assert got is not None and got.cached and got.text == "hi" and got.finish_reason == "stop"
    assert (got.usage.prompt_tokens, got.usage.completion_tokens, got.attempts) == (3, 1, 2)


def test_empty_text_is_a_result_but_failures_are_never_stored(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)  # a directory is accepted
    assert cache.path == tmp_path / CACHE_FILE_NAME
    assert not cache.put("k1", "s", ChatResult(text=None, error="HTTP 500"))
    assert not cache.put("k2", "s", ChatResult(text="partial", error="boom"))
    assert cache.put("k3", "s", ChatResult(text=""))
    assert cache.get("k1") is None and cache.get("k2") is None
    assert cache.get("k3") is not None and cache.get("k3").text == ""
    assert len(cache) == 1


def test_key_depends_on_spec_messages_and_settings_not_on_secrets() -> None:
    base = _req("hello").cache_key(ModelSpec.parse("openai:m").key())
    assert _req("hello!").cache_key(ModelSpec.parse("openai:m").key()) != base
    assert _req("hello", max_tokens=33).cache_key(ModelSpec.parse("openai:m").key()) != base
    assert _req("hello", temperature=0.5).cache_key(ModelSpec.parse("openai:m").key()) != base
    assert _req("hello").cache_key(ModelSpec.parse("openai:m2").key()) != base
    assert _req("hello").cache_key(ModelSpec.parse("openai:m,api_key=sk-abcdef123456").key()) == base


def test_persists_across_reopen_and_processes(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", "spec", ChatResult(text="stored"))
    code = (
        "import sys; from privasis_bench.engine.cache import ResponseCache; from privasis_bench.adapters.base import ChatResult\n"
        "c = ResponseCache(sys.argv[1]); assert c.get('k').text == 'stored'\n"
        "c.put('k2', 'spec', ChatResult(text='from child'))\n"
        "import os; os._exit(0)  # no close(): every put is already committed\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=60)
    again = ResponseCache(path)
    assert again.get("k2").text == "from child"
    assert again.count_by_spec() == {"spec": 2}
    assert again.clear("spec") == 2 and len(again) == 0


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")

    def work(t: int) -> None:
        for i in range(50):
            cache.put(f"{t}-{i}", "s", ChatResult(text=str(i)))
            assert cache.get(f"{t}-{i}").text == str(i)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(cache) == 200


def test_default_cache_dir_honours_env(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x"
    monkeypatch.delenv("PRIVASIS_BENCH_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "privasis-bench"


def test_a_full_disk_under_the_cache_is_one_line_naming_the_file(tmp_path) -> None:
    """Issue 34: 'database or disk is full' (a real SQLite page limit stands in for the disk) names the cache."""
    from privasis_bench.adapters.base import ChatResult
    from privasis_bench.engine.cache import CacheFileError

    (tmp_path / "c").mkdir()
    cache = ResponseCache(tmp_path / "c")
    pages = cache._connection().execute("PRAGMA page_count").fetchone()[0]
    cache._connection().execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(CacheFileError, match=r"responses.sqlite: cannot store an answer \(database or disk is full\).*--no-cache"):
        cache.put("k", "spec", ChatResult(text="x" * 200_000))
    cache.close()


def test_a_cache_file_with_a_foreign_schema_is_refused(tmp_path) -> None:
    import sqlite3

    from privasis_bench.engine.cache import CacheFileError

    path = tmp_path / "responses.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, value TEXT)")
    con.commit()
    con.close()
    with pytest.raises(CacheFileError, match="table responses has columns this version does not write"):
        ResponseCache(path)
