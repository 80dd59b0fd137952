"""The lmeval adapter driving lm-eval's ``local-chat-completions`` against a real vLLM server."""

from __future__ import annotations

import importlib.util
import os

import pytest

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec

try:
    from .tiny_model import SERVED_NAME
except ImportError:
    from tiny_model import SERVED_NAME  # type: ignore[no-redef]

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_lmeval_local_chat_completions_generates(vllm_server_url):
    if importlib.util.find_spec("lm_eval") is None:
        if os.environ.get("CI"):
            pytest.fail("lm_eval is not installed in CI", pytrace=False)
        pytest.skip("lm_eval is not installed (pip install '.[lmeval]')")
    spec = ModelSpec.parse(
        f"lmeval:local-chat-completions,model={SERVED_NAME},base_url={vllm_server_url}/chat/completions",
        "apply_chat_template=true,max_retries=1,timeout=120",
    )
    adapter = build_adapter(spec)
    requests = [ChatRequest.user(f"Remove the name: Lena Okafor visited on day {i}.", max_tokens=6) for i in (1, 2)]
    results = adapter.generate_batch(requests)
    assert len(results) == 2
    assert all(r.ok and isinstance(r.text, str) for r in results), results
    assert any(r.text.strip() for r in results)  # random weights: gibberish, but real tokens
