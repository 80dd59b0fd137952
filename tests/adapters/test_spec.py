"""Model spec parsing: provider:model, inline and separate k=v arguments, model-less baselines."""

from __future__ import annotations

import pytest

from privasis_bench.adapters.spec import MODELLESS_PROVIDERS, ModelSpec, parse_args
from privasis_bench.errors import ModelSpecError


def test_provider_model_and_inline_args_are_coerced():
    spec = ModelSpec.parse("llamacpp:smollm2,n_ctx=2048,verbose=false,top_p=0.9,chat_format=chatml")
    assert (spec.provider, spec.model) == ("llamacpp", "smollm2")
    assert spec.args == {"n_ctx": 2048, "verbose": False, "top_p": 0.9, "chat_format": "chatml"}


def test_hf_ids_keep_their_slash_and_later_colons():
    assert ModelSpec.parse("vllm:Qwen/Qwen3-0.6B").model == "Qwen/Qwen3-0.6B"
    assert ModelSpec.parse("openai:llama3:8b").model == "llama3:8b"


def test_model_args_override_inline_args():
    spec = ModelSpec.parse("openai:gpt-4.1,timeout=30", "timeout=60,base_url=http://127.0.0.1:8080/v1")
    assert spec.args == {"timeout": 60, "base_url": "http://127.0.0.1:8080/v1"}
    assert ModelSpec.parse("openai:m", {"seed": 3}).args == {"seed": 3}


@pytest.mark.parametrize("text", sorted(MODELLESS_PROVIDERS))
def test_baselines_parse_without_a_colon(text):
    spec = ModelSpec.parse(text)
    assert (spec.provider, spec.model) == (text, "")
    assert ModelSpec.parse(f"{text}:").model == ""
    assert ModelSpec.parse(f"{text}:baseline").model == "baseline"


def test_bare_baseline_with_arguments():
    spec = ModelSpec.parse("mask-targets,placeholder=[X]")
    assert spec.provider == "mask-targets" and spec.args == {"placeholder": "[X]"}


@pytest.mark.parametrize("text", ["gpt-4.1", "openai", ":gpt-4.1", "  "])
def test_model_providers_need_a_colon(text):
    with pytest.raises(ModelSpecError, match="provider:model"):
        ModelSpec.parse(text)


def test_malformed_argument_is_an_error():
    with pytest.raises(ModelSpecError, match="key=value"):
        parse_args("n_ctx=1,oops")


def test_key_and_dict_never_contain_secrets():
    spec = ModelSpec.parse("openai:gpt-4.1,api_key=sk-secret-123456", "seed=1")
    assert "sk-secret" not in spec.key()
    assert "api_key" not in spec.to_dict()["args"]
    assert spec.key() == 'openai:gpt-4.1,{"seed": 1}'
