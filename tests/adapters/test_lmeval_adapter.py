"""The lmeval adapter: Instances built for generate_until, chat templating, model_args forwarding."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lm_eval")

from lm_eval.api.model import LM  # noqa: E402
from lm_eval.api.registry import register_model  # noqa: E402

from privasis_bench.adapters.base import ChatRequest  # noqa: E402
from privasis_bench.adapters.registry import build_adapter  # noqa: E402
from privasis_bench.adapters.spec import ModelSpec  # noqa: E402
from privasis_bench.errors import ModelSpecError  # noqa: E402


@register_model("privasis-test-echo")
class EchoLM(LM):
    """Unit-test LM: returns what it was asked (context, gen kwargs, its own construction args)."""

    def __init__(self, prefix: str = "", with_template: bool = True, **kwargs) -> None:
        super().__init__()
        self.prefix = prefix
        self.with_template = with_template

    def apply_chat_template(self, chat_history, add_generation_prompt=True):
        if not self.with_template:
            raise NotImplementedError("no template")
        return "".join(f"<{m['role']}>{m['content']}" for m in chat_history) + ("<assistant>" if add_generation_prompt else "")

    def generate_until(self, requests, disable_tqdm: bool = False):
        out = []
        for inst in requests:
            assert inst.request_type == "generate_until" and inst.doc == {}
            context, gen_kwargs = inst.arguments
            out.append(json.dumps({"prefix": self.prefix, "context": context, "gen": gen_kwargs, "idx": inst.idx}))
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError


def run(spec: str, *requests: ChatRequest) -> list[dict]:
    adapter = build_adapter(ModelSpec.parse(spec))
    return [json.loads(r.text) for r in adapter.generate_batch(list(requests))]


def test_chat_template_model_args_and_gen_kwargs():
    a = ChatRequest.user("first", max_tokens=9)
    b = ChatRequest(messages=(("user", "second"),), max_tokens=5, temperature=0.7, stop=("###",))
    first, second = run("lmeval:privasis-test-echo,prefix=P1", a, b)
    assert first == {"prefix": "P1", "context": "<user>first<assistant>", "idx": 0,
                     "gen": {"until": [], "max_gen_toks": 9, "temperature": 0.0, "do_sample": False}}
    assert second["idx"] == 1 and second["gen"]["until"] == ["###"] and second["gen"]["do_sample"] is True


def test_plain_text_when_asked_or_when_no_template():
    request = ChatRequest(messages=(("system", "be brief"), ("user", "hello")), max_tokens=4)
    (out,) = run("lmeval:privasis-test-echo,apply_chat_template=false", request)
    assert out["context"] == "be brief\n\nhello"
    (out,) = run("lmeval:privasis-test-echo,with_template=false", request)
    assert out["context"] == "be brief\n\nhello"


def test_unknown_lm_eval_model_is_a_spec_error():
    with pytest.raises(ModelSpecError, match="no lm-eval model named"):
        build_adapter(ModelSpec.parse("lmeval:no-such-model-xyz"))


def test_adapter_is_batched_and_lists_its_extra():
    adapter = build_adapter(ModelSpec.parse("lmeval:privasis-test-echo"))
    assert adapter.batched and adapter.extra == "lmeval"


def test_a_model_argument_goes_to_lm_eval_not_the_adapter():
    adapter = build_adapter(ModelSpec.parse("lmeval:privasis-test-echo,model=served-name,prefix=P"))
    assert adapter.model == "privasis-test-echo" and adapter.model_args == {"model": "served-name", "prefix": "P"}
