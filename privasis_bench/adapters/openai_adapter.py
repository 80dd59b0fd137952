"""``openai:<model>``: the OpenAI chat-completions API, or any OpenAI-compatible server.

Arguments (``--model-args k=v,...`` or ``openai:model,k=v``):

- ``base_url``: e.g. ``http://127.0.0.1:8080/v1`` for llama.cpp's server, ``http://127.0.0.1:8000/v1``
  for vLLM, or a gateway. Without it the official API is used.
- ``api_key``: the key (better: leave it out and set ``OPENAI_API_KEY``). ``api_key_env``: the name of
  another environment variable holding the key (e.g. ``OPENROUTER_API_KEY``). With a ``base_url`` and no
  key, the dummy key ``EMPTY`` is sent (local servers do not check it).
- ``timeout``: seconds per request (default: by the request's token budget, 60 s + 0.1 s per token, at least 180 s). The SDK's own retries are off: the engine retries.
- ``reasoning``: true/false; default: detected from the model name (o1/o3/o4/gpt-5 families). Reasoning
  models get ``max_completion_tokens`` and no ``temperature``.
- ``top_p``, ``seed``, ``reasoning_effort``, ``presence_penalty``, ``frequency_penalty``, ``service_tier``,
  ``organization``: passed through.
- ``body.<name>[.<sub>]=v``: added to the request body (``extra_body``), for server-specific
  parameters, e.g. ``body.top_k=20`` or ``body.chat_template_kwargs.enable_thinking=false``.

Only the final answer (``message.content``) is returned; a separate ``reasoning_content`` is dropped.
"""

from __future__ import annotations

import os
import re
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

_REASONING_MODEL = re.compile(r"^(o\d+|gpt-5)([-.].*)?$", re.IGNORECASE)
_PASS_THROUGH = ("top_p", "seed", "reasoning_effort", "presence_penalty", "frequency_penalty", "service_tier")
_CLIENT_ARGS = ("base_url", "api_key", "api_key_env", "timeout", "reasoning", "organization")
_FINISH = {"stop": "stop", "length": "length", "content_filter": "content_filter", "tool_calls": "tool_calls",
           "function_call": "tool_calls", "eos": "stop", "abort": "error"}


def is_reasoning_model(model: str) -> bool:
    """True for model names of the o1/o3/o4/gpt-5 families (any ``vendor/`` prefix is ignored)."""
    return bool(_REASONING_MODEL.match(model.rsplit("/", 1)[-1]))


def split_body_args(args: dict[str, Any]) -> dict[str, Any]:
    """Collect ``body.a.b=v`` arguments into a nested ``extra_body`` dict."""
    body: dict[str, Any] = {}
    for key, value in args.items():
        if not key.startswith("body."):
            continue
        parts = key[len("body."):].split(".")
        if not all(parts):
            raise ModelSpecError(f"model argument {key!r}: expected body.<name>[.<sub>...]")
        node = body
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ModelSpecError(f"model argument {key!r} conflicts with another body.* argument")
        node[parts[-1]] = value
    return body


def normalize_finish_reason(reason: str | None) -> str | None:
    """Map provider finish reasons onto stop / length / content_filter / tool_calls."""
    if reason is None:
        return None
    return _FINISH.get(str(reason), str(reason))


class OpenAIAdapter(Adapter):
    """Async client for ``/v1/chat/completions`` (official API or a compatible server)."""

    provider = "openai"
    constrains = True  # as llama.cpp's server's ``grammar`` field (see request_kwargs)

    def __init__(self, model: str, **args: Any) -> None:
        super().__init__(model, **args)
        if not model:
            raise ModelSpecError("openai: a model name is required, e.g. openai:gpt-4.1-mini")
        unknown = sorted(k for k in args if k not in _CLIENT_ARGS + _PASS_THROUGH and not k.startswith("body."))
        if unknown:
            raise ModelSpecError(
                f"openai: unknown model argument(s) {', '.join(unknown)}; accepted: "
                f"{', '.join(_CLIENT_ARGS + _PASS_THROUGH)} and body.<name>=value"
            )
        self.base_url: str | None = url_arg(args, "base_url", self.provider)
        self.timeout = seconds_arg(args, "timeout", DEFAULT_TIMEOUT_S, self.provider)
        self.timeout_given = self.timeout if args.get("timeout") not in (None, "") else None  # else: by token budget
        self._api_key = self._resolve_key(args)
        reasoning = bool_arg(args, "reasoning", self.provider)
        self.reasoning = is_reasoning_model(model) if reasoning is None else bool(reasoning)
        self.extra_body = split_body_args(args)
        self.pass_through = {k: args[k] for k in _PASS_THROUGH if args.get(k) is not None}
        self._client: Any = None

    def _resolve_key(self, args: dict[str, Any]) -> str:
        if args.get("api_key"):
            return str(args["api_key"])
        env_name = str(args.get("api_key_env") or "OPENAI_API_KEY")
        if os.environ.get(env_name):
            return os.environ[env_name]
        if self.base_url:
            return "EMPTY"
        raise ModelSpecError(f"openai: no API key: set {env_name} (or pass base_url=... for a local server)")

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                organization=self.args.get("organization") or None,
                timeout=self.timeout,
                max_retries=0,
            )
        return self._client

    def sync_client(self) -> Any:
        """A blocking SDK client with this adapter's key, base_url and timeout (for the batch endpoints)."""
        import openai

        return openai.OpenAI(api_key=self._api_key, base_url=self.base_url,
                             organization=self.args.get("organization") or None, timeout=self.timeout, max_retries=0)

    @property
    def secrets(self) -> list[str]:
        """The key this adapter sends (scrubbed from every message it raises)."""
        return [self._api_key]

    def request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """The fields of the chat completion request body (``extra_body`` is merged into the body when sent)."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": request.as_openai_messages()}
        if self.reasoning:
            kwargs["max_completion_tokens"] = request.max_tokens
        else:
            kwargs["max_tokens"] = request.max_tokens
            kwargs["temperature"] = request.temperature
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.grammar is not None:  # llama.cpp's server reads it; a server that does not refuses the request
            kwargs["grammar"] = request.grammar
        kwargs.update(self.pass_through)
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        return kwargs

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Send one chat request; raise AdapterError (classified, key-free) on failure."""
        import openai
        from openai.types.chat import ChatCompletion

        client = self._get_client()
        body = self.request_kwargs(request)
        body.update(body.pop("extra_body", None) or {})
        try:
            # The body is already plain JSON (strings, numbers, lists of role/content dicts), so it is posted as it is:
            # ``chat.completions.create`` would first walk it against the SDK's parameter types, which costs about a
            # millisecond of CPU per request and changes nothing for such a body.
            response = await client.post("/chat/completions", body=body, cast_to=ChatCompletion,
                                         options={"timeout": request_timeout(self.timeout_given, request.max_tokens)})
        except openai.OpenAIError as exc:
            raise classify_sdk_error(exc, openai, provider="openai", secrets=[self._api_key]) from None
        return parse_chat_completion(response)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def parse_chat_completion(response: Any) -> ChatResult:
    """Turn a ChatCompletion into a ChatResult: final content only, usage, normalized finish reason."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise AdapterError("openai: the response has no choices", retryable=True)
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None) if message is not None else None
    usage = getattr(response, "usage", None)
    return ChatResult(
        text=content if isinstance(content, str) else "",
        finish_reason=normalize_finish_reason(getattr(choice, "finish_reason", None)),
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        ),
    )
