"""The HTTP adapters and the execution engine against real local servers.

* ``openai:`` against llama.cpp's server (xllamacpp) serving SmolLM2 (a real chat model: the sanitize stage
  over two sample records must produce text and count tokens);
* ``openai:`` and ``anthropic:`` against ``vllm.entrypoints.openai.api_server`` serving a tiny
  random-weight Llama (gibberish text, but real request and response shapes and token usage);
* ``vllm:`` (the offline engine) is checked in test_train_cleaner.py, on the model that test trains.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.executor import Engine

try:  # works whether or not tests/ is a package
    from .tiny_model import SERVED_NAME
except ImportError:
    from tiny_model import SERVED_NAME  # type: ignore[no-redef]

pytestmark = pytest.mark.integration


def make_engine(spec_text: str, **args: object) -> Engine:
    """An engine over a freshly built adapter, without cache or progress bar, few retries; answers cut at the tests'
    tiny token budgets are accepted (by default they would be failures)."""
    from privasis_bench.engine.answers import AnswerPolicy
    from privasis_bench.engine.retry import RetryPolicy

    spec = ModelSpec.parse(spec_text, dict(args))
    return Engine(build_adapter(spec), spec, role="model", cache=None, progress=False,
                  retry=RetryPolicy(max_attempts=2, base_delay=0.5), answers=AnswerPolicy(truncated="accept"))


# --------------------------------------------------------------------------- llama.cpp server
def test_openai_adapter_sanitizes_sample_records_on_llama_cpp_server(llama_server_url: str, tmp_path: Path) -> None:
    from privasis_bench.data.loading import load_records
    from privasis_bench.pipeline.flow import run_sanitize
    from privasis_bench.tasks.registry import load_task

    task = load_task("privasis_sample")
    records = load_records(task).scored[:2]
    assert len(records) == 2
    out = tmp_path / "sanitized.jsonl"
    with make_engine("openai:smollm2", base_url=llama_server_url, timeout=300) as engine:
        outputs = run_sanitize(records, task, engine, out, max_tokens=48)
        stats = engine.stats

    assert [o.id for o in outputs] == [r.id for r in records]
    for output in outputs:
        assert output.ok, output.error
        assert output.raw_output and output.output is not None, output
        assert output.output.strip(), f"empty sanitized text for {output.id}: {output.raw_output!r}"
        assert output.usage.prompt_tokens > 50  # the prompt holds the whole record
        assert 0 < output.usage.completion_tokens <= 48
    assert stats.batches == 2 and stats.failed == 0
    assert stats.usage.prompt_tokens == sum(o.usage.prompt_tokens for o in outputs)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in lines] == [r.id for r in records]


def test_openai_adapter_reports_a_bad_model_request_as_failure(llama_server_url: str) -> None:
    """A prompt over the server's context window is a recorded failure, never an empty success."""
    with make_engine("openai:smollm2", base_url=llama_server_url, timeout=120) as engine:
        (result,) = engine.run([ChatRequest.user("word " * 6000, max_tokens=8)], desc="too long")
    assert not result.ok and result.text is None
    assert result.error


# --------------------------------------------------------------------------- vLLM server
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_http_adapters_against_vllm_server(provider: str, vllm_server_root: str) -> None:
    base_url = vllm_server_root + "/v1" if provider == "openai" else vllm_server_root  # the SDK adds /v1
    requests = [
        ChatRequest.user("Remove the name from: Lena Okafor called the clinic on Monday.", max_tokens=12),
        ChatRequest.user("Rewrite without the address: she lives at 12 Elm Road.", max_tokens=6),
    ]
    with make_engine(f"{provider}:{SERVED_NAME}", base_url=base_url, timeout=120) as engine:
        results = engine.run(requests, desc=provider)
        stats = engine.stats
    for request, result in zip(requests, results):
        assert result.ok, result.error
        assert isinstance(result.text, str)
        assert result.usage.prompt_tokens > 5
        assert 0 < result.usage.completion_tokens <= request.max_tokens
        assert result.finish_reason in ("stop", "length")
    # random weights rarely emit end-of-sequence: the short budget must have been hit and honoured
    assert results[1].usage.completion_tokens == 6 or results[1].finish_reason == "stop"
    assert stats.batches == 2 and stats.failed == 0
    assert stats.usage.completion_tokens == sum(r.usage.completion_tokens for r in results)


def test_vllm_server_rejects_unknown_model_without_retrying(vllm_server_root: str) -> None:
    with make_engine("openai:no-such-model", base_url=vllm_server_root + "/v1", timeout=60) as engine:
        (result,) = engine.run([ChatRequest.user("hello", max_tokens=4)], desc="unknown model")
        stats = engine.stats
    assert not result.ok and result.text is None and result.error
    assert stats.retries == 0  # 404 is not retryable


# The offline vLLM engine (``vllm:``) through the harness's engine is checked in test_train_cleaner.py (step 5), on
# the directory that test trains: one offline vLLM start for both.
