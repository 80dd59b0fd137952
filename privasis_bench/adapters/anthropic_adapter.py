"""``anthropic:<model>``: the Anthropic Messages API (or a server that speaks ``/v1/messages``).

Arguments:

- ``base_url``: override the API root (e.g. a vLLM server, which also serves ``/v1/messages``).
- ``api_key``: the key (better: set ``ANTHROPIC_API_KEY``); ``api_key_env`` names another variable.
  With a ``base_url`` and no key, the dummy key ``EMPTY`` is sent.
- ``timeout``: seconds per request (default: by the request's token budget, 60 s + 0.1 s per token, at least 180 s). SDK retries are off: the engine retries.
- ``send_temperature``: true/false. Recent SDKs and the official API no longer take sampling
  parameters; then temperature (and ``top_p``/``top_k``) are sent in the request body only to a
  ``base_url`` server (vLLM's ``/v1/messages`` accepts them), unless this says otherwise. With an SDK
  whose ``messages.create`` still has ``temperature``, it is always sent.
- ``top_p``, ``top_k``: as temperature. ``effort``: low/medium/high/... (``output_config.effort``).
- ``thinking_budget=N``: extended thinking with that budget (temperature is then omitted);
  thinking blocks are never part of the output.

System messages in a request become the ``system`` parameter; the text blocks of the reply are joined.
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any

from privasis_bench.adapters.base import (
    Adapter,
    AdapterError,
    ChatRequest,
    ChatResult,
    Usage,
)
from privasis_bench.adapters.http_errors import (
    DEFAULT_TIMEOUT_S,
    bool_arg,
    classify_sdk_error,
    request_timeout,
    seconds_arg,
    url_arg,
)
from privasis_bench.errors import ModelSpecError

_ARGS = ("base_url", "api_key", "api_key_env", "timeout", "top_p", "top_k", "thinking_budget", "send_temperature",
         "effort")
_SAMPLING = ("temperature", "top_p", "top_k")
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
           "refusal": "content_filter", "pause_turn": "length", "model_context_window_exceeded": "length"}


class AnthropicAdapter(Adapter):
    """Async client for the Messages API."""

    provider = "anthropic"

    def __init__(self, model: str, **args: Any) -> None:
        super().__init__(model, **args)
        if not model:
            raise ModelSpecError("anthropic: a model name is required, e.g. anthropic:claude-sonnet-4-5")
        unknown = sorted(k for k in args if k not in _ARGS)
        if unknown:
            raise ModelSpecError(f"anthropic: unknown model argument(s) {', '.join(unknown)}; accepted: {', '.join(_ARGS)}")
        self.base_url: str | None = url_arg(args, "base_url", self.provider)
        self.timeout = seconds_arg(args, "timeout", DEFAULT_TIMEOUT_S, self.provider)
        self.timeout_given = self.timeout if args.get("timeout") not in (None, "") else None  # else: by token budget
        env_name = str(args.get("api_key_env") or "ANTHROPIC_API_KEY")
        key = args.get("api_key") or os.environ.get(env_name) or ("EMPTY" if self.base_url else None)
        if not key:
            raise ModelSpecError(f"anthropic: no API key: set {env_name} (or pass base_url=... for a local server)")
        self._api_key = str(key)
        self.send_temperature = bool_arg(args, "send_temperature", self.provider)
        self._client: Any = None

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic

            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
        return self._client

    def sync_client(self) -> Any:
        """A blocking SDK client with this adapter's key, base_url and timeout (for message batches)."""
        import anthropic

        return anthropic.Anthropic(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    @property
    def secrets(self) -> list[str]:
        """The key this adapter sends (scrubbed from every message it raises)."""
        return [self._api_key]

    def request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments sent to ``messages.create`` for this request."""
        system = "\n\n".join(c for role, c in request.messages if role == "system")
        messages = [{"role": role, "content": c} for role, c in request.messages if role != "system"]
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": request.max_tokens}
        if system:
            kwargs["system"] = system
        budget = self.args.get("thinking_budget")
        sampling: dict[str, Any] = {}
        if budget:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": int(budget)}
        else:
            sampling["temperature"] = request.temperature
        sampling.update({k: self.args[k] for k in ("top_p", "top_k") if self.args.get(k) is not None})
        if self.args.get("effort"):
            kwargs["output_config"] = {"effort": self.args["effort"]}
        if request.stop:
            kwargs["stop_sequences"] = list(request.stop)
        if _sdk_takes_sampling():
            kwargs.update(sampling)
        elif sampling and (self.base_url is not None if self.send_temperature is None else self.send_temperature):
            kwargs["extra_body"] = sampling
        return kwargs

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Send one request; raise AdapterError (classified, key-free) on failure."""
        import anthropic

        client = self._get_client()
        try:
            response = await client.messages.create(**self.request_kwargs(request),
                                                    timeout=request_timeout(self.timeout_given, request.max_tokens))
        except anthropic.AnthropicError as exc:
            raise classify_sdk_error(exc, anthropic, provider="anthropic", secrets=[self._api_key]) from None
        return parse_message(response)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            await self._client.close()
            self._client = None


@functools.lru_cache(maxsize=1)
def _sdk_takes_sampling() -> bool:
    """True when the installed SDK's ``messages.create`` still has a ``temperature`` parameter."""
    from anthropic.resources.messages import AsyncMessages

    return "temperature" in inspect.signature(AsyncMessages.create).parameters


def parse_message(response: Any) -> ChatResult:
    """Join the text blocks of a Message (thinking blocks dropped) into a ChatResult."""
    blocks = getattr(response, "content", None)
    if blocks is None:
        raise AdapterError("anthropic: the response has no content", retryable=True)
    text = "".join(getattr(b, "text", "") or "" for b in blocks if getattr(b, "type", None) == "text")
    usage = getattr(response, "usage", None)
    reason = getattr(response, "stop_reason", None)
    return ChatResult(
        text=text,
        finish_reason=_FINISH.get(reason, reason) if reason else None,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        ),
    )
