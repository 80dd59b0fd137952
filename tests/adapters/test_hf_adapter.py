"""``hf:`` adapter: in-process transformers on a tiny local model (batching, budgets, failures, usage, hub fail-fast)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

from integration.tiny_model import build_tiny_llama  # noqa: E402

from privasis_bench.adapters.base import ChatRequest  # noqa: E402
from privasis_bench.adapters.registry import build_adapter, list_providers  # noqa: E402
from privasis_bench.adapters.spec import ModelSpec  # noqa: E402
from privasis_bench.engine.executor import Engine  # noqa: E402
from privasis_bench.errors import ModelSpecError  # noqa: E402


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("hf_tiny"))


def test_the_provider_is_listed_with_its_extra():
    row = next(p for p in list_providers() if p.name == "hf")
    assert row.extra == "hf" and row.source == "builtin" and row.rankable is True


def test_batched_greedy_generation_respects_each_budget_and_reports_usage(tiny_dir: Path):
    adapter = build_adapter(ModelSpec.parse(f"hf:{tiny_dir},batch_size=2,n_threads=1"))
    requests = [ChatRequest.user(f"Rewrite the record number {i}.", max_tokens=n) for i, n in enumerate((3, 9, 6))]
    first = adapter.generate_batch(requests)
    again = adapter.generate_batch(requests)
    assert [r.text for r in first] == [r.text for r in again]  # greedy: deterministic
    for request, result in zip(requests, first):
        assert result.ok and isinstance(result.text, str)
        assert 0 < result.usage.completion_tokens <= request.max_tokens
        assert result.usage.prompt_tokens > 5
        assert result.finish_reason in ("stop", "length")
    assert not adapter.cacheable  # a local directory's weights can change under the same path


def test_left_padded_batches_give_the_same_greedy_text_as_single_requests(tiny_dir: Path):
    adapter = build_adapter(ModelSpec.parse(f"hf:{tiny_dir},batch_size=3"))
    prompts = ("Short one.", "A much longer prompt about the patient record and the clinic phone number to keep.",
               "Medium length prompt here.")
    requests = [ChatRequest.user(p, max_tokens=12) for p in prompts]
    batched = [r.text for r in adapter.generate_batch(requests)]
    single = [adapter.generate_batch([r])[0].text for r in requests]
    assert batched == single and len(set(batched)) == 3


def test_a_prompt_that_does_not_fit_fails_alone_and_is_recorded_through_the_engine(tiny_dir: Path):
    from privasis_bench.engine.answers import AnswerPolicy

    spec = ModelSpec.parse(f"hf:{tiny_dir},max_length=64")
    adapter = build_adapter(spec)
    # a 4-token budget on random weights is cut: accepted here, as this test is about the context window
    engine = Engine(adapter, spec, role="model", cache=None, progress=False, answers=AnswerPolicy(truncated="accept"))
    try:
        results = engine.run([ChatRequest.user("short", max_tokens=4), ChatRequest.user("word " * 200, max_tokens=4)], desc="t")
    finally:
        engine.close()
    assert results[0].ok
    assert results[1].text is None and "does not fit the context window (64)" in (results[1].error or "")
    assert engine.stats.failed == 1


def test_argument_and_path_errors_are_one_line(tmp_path: Path):
    with pytest.raises(ModelSpecError, match="unknown model argument.*temperature"):
        build_adapter(ModelSpec.parse(f"hf:{tmp_path},temperature=1"))
    with pytest.raises(ModelSpecError, match="dtype must be one of"):
        build_adapter(ModelSpec.parse(f"hf:{tmp_path},dtype=int8"))
    with pytest.raises(ModelSpecError, match="is not a model directory"):
        build_adapter(ModelSpec.parse(f"hf:{tmp_path / 'missing'}"))


def test_a_broken_directory_is_a_recorded_non_retryable_failure(tmp_path: Path):
    spec = ModelSpec.parse(f"hf:{tmp_path}")
    engine = Engine(build_adapter(spec), spec, role="model", cache=None, progress=False)
    try:
        (result,) = engine.run([ChatRequest.user("hi", max_tokens=2)], desc="t")
    finally:
        engine.close()
    assert result.text is None and result.error.startswith("hf: cannot load") and result.attempts == 1


def test_an_unreachable_hub_id_fails_fast_with_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    started = time.monotonic()
    with pytest.raises(ModelSpecError, match=r"huggingface-cli download Qwen/Qwen3-0\.6B.*hf:/path/to/model"):
        build_adapter(ModelSpec.parse("hf:Qwen/Qwen3-0.6B"))
    assert time.monotonic() - started < 5


def test_a_cached_hub_id_loads_from_the_cache_without_the_hub(tiny_dir: Path, tmp_path: Path):
    import shutil
    import subprocess
    import sys

    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--privasis--tiny-cleaner"
    shutil.copytree(tiny_dir, repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    code = (
        "from privasis_bench.adapters.registry import build_adapter\n"
        "from privasis_bench.adapters.spec import ModelSpec\n"
        "from privasis_bench.adapters.base import ChatRequest\n"
        "a = build_adapter(ModelSpec.parse('hf:privasis/tiny-cleaner'))\n"
        "assert a.cache_only and a.cacheable\n"
        "(r,) = a.generate_batch([ChatRequest.user('hello', max_tokens=3)])\n"
        "assert r.ok and r.usage.completion_tokens > 0, r\n"
        "print('loaded from cache')\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path), "HF_HUB_CACHE": str(tmp_path / "hub")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and "loaded from cache" in out.stdout, out.stderr[-2000:]


@pytest.mark.parametrize("handling", ["retry", "accept"])
def test_cut_answers_follow_the_one_answer_policy_like_every_other_adapter(tiny_dir: Path, handling: str):
    """Issue 34: a local hf: model is not cached, yet its cut answers are asked again (3 tries) and then fail,
    as for llamacpp: and HTTP models; only with truncated=accept are they kept (and counted)."""
    from privasis_bench.engine.answers import AnswerPolicy

    spec = ModelSpec.parse(f"hf:{tiny_dir},n_threads=1")
    engine = Engine(build_adapter(spec), spec, role="model", cache=None, progress=False,
                    answers=AnswerPolicy(truncated=handling))
    try:
        # a 1-token budget on a random-weight model: the answer runs into the budget, every time
        (result,) = engine.run([ChatRequest.user("Rewrite the record number 1.", max_tokens=1)], desc="t")
    finally:
        engine.close()
    if handling == "retry":
        assert not result.ok and "cut at the token budget" in result.error and engine.stats.rejected_answers == 3
        assert result.attempts == 3 and result.usage.completion_tokens == 3  # each try was paid for
    else:
        assert result.ok and result.finish_reason == "length" and engine.stats.truncated == 1
