"""``lmeval:<lm-eval model name>``: any model registered in lm-evaluation-harness, via ``generate_until``.

Every argument except ``apply_chat_template`` is handed to the lm-eval model's
``create_from_arg_string`` as ``k=v,...``, exactly as ``lm-eval --model_args`` would. Examples::

    lmeval:local-chat-completions,model=smollm2,base_url=http://127.0.0.1:8080/v1/chat/completions
    lmeval:hf,pretrained=/path/to/model,dtype=float32

``apply_chat_template``: ``true`` formats the messages with ``lm.apply_chat_template`` (required by chat
API back-ends), ``false`` sends the message contents as plain text; by default the chat template is
used when the model provides one, else plain text. Install with ``pip install 'privasis-bench[lmeval]'``.
lm-eval reports no token usage, so usage is zero; finish reasons are unknown (None).
"""

from __future__ import annotations

import inspect
import logging
import threading
from typing import Any

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult
from privasis_bench.adapters.http_errors import bool_arg, url_arg
from privasis_bench.adapters.registry import require_module
from privasis_bench.errors import ModelSpecError

log = logging.getLogger(__name__)


def to_arg_string(args: dict[str, Any]) -> str:
    """Render arguments as lm-eval's ``k=v,k2=v2`` string."""
    return ",".join(f"{k}={v}" for k, v in args.items())


class LMEvalAdapter(Adapter):
    """Wraps an ``lm_eval.api.model.LM``; the engine hands over chunks (one generate_until call each)."""

    provider = "lmeval"
    batched = True
    extra = "lmeval"

    def __init__(self, model: str, /, **args: Any) -> None:
        # positional-only, and no super().__init__(model, **args): lm-eval model args often include model=...
        self.model, self.args = model, dict(args)
        if not model:
            raise ModelSpecError("lmeval: name an lm-eval model, e.g. lmeval:local-chat-completions,model=...")
        require_module("lm_eval", provider="lmeval", extra="lmeval")
        url_arg(args, "base_url", self.provider)  # a typo here would fail every record: one line up front
        self.chat_mode: bool | None = bool_arg(args, "apply_chat_template", self.provider)
        self.model_args = {k: v for k, v in args.items() if k != "apply_chat_template"}
        import lm_eval.models  # noqa: F401  registers lm-eval's built-in models even if a plugin registered first
        from lm_eval.api.registry import get_model

        try:
            self._lm_class = get_model(model)
        except ValueError as exc:
            raise ModelSpecError(f"lmeval: no lm-eval model named {model!r}: {str(exc)[:300]}") from None
        self._lm: Any = None
        self._lock = threading.Lock()
        self._warned = False

    def _load(self) -> Any:
        with self._lock:
            if self._lm is None:
                try:
                    self._lm = self._lm_class.create_from_arg_string(to_arg_string(self.model_args), {})
                except Exception as exc:  # noqa: BLE001 - any construction failure is a configuration error
                    raise AdapterError(f"lmeval: cannot build {self.model}: {type(exc).__name__}: {exc}",
                                       retryable=False) from exc
        return self._lm

    def context(self, lm: Any, request: ChatRequest) -> Any:
        """The context string for one request: chat-templated, or the plain message contents."""
        messages = request.as_openai_messages()
        if self.chat_mode is not False:
            try:
                return lm.apply_chat_template(messages, add_generation_prompt=True)
            except Exception as exc:  # noqa: BLE001
                if self.chat_mode:
                    raise AdapterError(f"lmeval: apply_chat_template failed: {exc}", retryable=False) from exc
                if not self._warned:
                    log.warning("lmeval:%s has no usable chat template (%s); sending plain text", self.model, exc)
                    self._warned = True
                self.chat_mode = False
        return "\n\n".join(m["content"] for m in messages)

    @staticmethod
    def gen_kwargs(request: ChatRequest) -> dict[str, Any]:
        """lm-eval generation kwargs: stop strings, token budget, temperature."""
        return {
            "until": list(request.stop),
            "max_gen_toks": request.max_tokens,
            "temperature": request.temperature,
            "do_sample": request.temperature > 0,
        }

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Build one Instance per request and run them through ``lm.generate_until``."""
        from lm_eval.api.instance import Instance

        lm = self._load()
        instances = [
            Instance(request_type="generate_until", doc={}, arguments=(self.context(lm, r), self.gen_kwargs(r)), idx=i)
            for i, r in enumerate(requests)
        ]
        with self._lock:
            quiet = {"disable_tqdm": True} if "disable_tqdm" in inspect.signature(lm.generate_until).parameters else {}
            try:
                outputs = lm.generate_until(instances, **quiet)
            except Exception as exc:  # noqa: BLE001 - lm-eval back-ends raise anything
                raise AdapterError(f"lmeval: generate_until failed: {type(exc).__name__}: {exc}", retryable=True) from exc
        if len(outputs) != len(requests):
            raise AdapterError(f"lmeval: {len(outputs)} outputs for {len(requests)} requests", retryable=False)
        return [
            ChatResult(text=o, finish_reason=None) if isinstance(o, str)
            else ChatResult(text=None, error=f"lmeval: the model returned {type(o).__name__}, not text")
            for o in outputs
        ]

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Single-request form (runs in a worker thread)."""
        import asyncio

        return (await asyncio.to_thread(self.generate_batch, [request]))[0]
