"""Model specs: ``provider:model`` plus ``k=v`` arguments, frozen and serializable."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from privasis_bench.errors import ModelSpecError

#: Argument names whose values are never written to results, caches or logs.
SECRET_ARGS = frozenset({"api_key", "key", "token", "secret", "password", "auth_token"})
#: Arguments that say where or how patiently to reach a model, not what it answers: left out of the
#: cache identity, so moving a server to another host or port reuses every cached answer. ``replicas`` (llama.cpp:
#: identical copies of the model, each processing every prompt whole) changes how many answers come at once, never
#: which.
TRANSPORT_ARGS = frozenset({"base_url", "api_base", "timeout", "max_retries", "organization", "project", "api_key_env",
                            "num_concurrent", "replicas"})
#: Harness-level argument that keeps two deployments of the same model name apart in the cache.
CACHE_NAMESPACE_ARG = "cache_namespace"

#: Providers that need no model name: ``identity``, ``identity:`` and ``identity:anything`` all parse.
MODELLESS_PROVIDERS = frozenset({"identity", "empty", "reference", "mask-targets", "regex-scrubber", "presidio", "scrubadub",
                                 "spacy-ner", "datafog"})


def _coerce(value: str) -> Any:
    """Turn a command-line value into bool/int/float/None when it clearly is one."""
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def parse_args(text: str | None) -> dict[str, Any]:
    """Parse ``k=v,k2=v2`` into a dict (values coerced to bool/int/float where obvious)."""
    args: dict[str, Any] = {}
    if not text:
        return args
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise ModelSpecError(f"model argument {part!r} is not of the form key=value")
        key, value = part.split("=", 1)
        args[key.strip()] = _coerce(value.strip())
    return args


@dataclass(frozen=True)
class ModelSpec:
    """Which adapter (provider) runs which model, with which arguments."""

    provider: str
    model: str
    args: dict[str, Any] = field(default_factory=dict, hash=False)

    @classmethod
    def parse(cls, text: str, model_args: str | dict[str, Any] | None = None) -> "ModelSpec":
        """Parse ``provider:model[,k=v...]``; ``model_args`` (string or dict) is merged on top."""
        text = text.strip()
        head, _, inline = text.partition(",")
        provider, sep, model = head.partition(":")
        if not sep and provider.strip() in MODELLESS_PROVIDERS:
            sep = ":"
        if not sep or not provider.strip():
            raise ModelSpecError(
                f"model spec {text!r} must look like provider:model (e.g. openai:gpt-4.1, llamacpp:smollm2)"
            )
        args = parse_args(inline)
        args.update(parse_args(model_args) if isinstance(model_args, str) or model_args is None else model_args)
        return cls(provider=provider.strip(), model=model.strip(), args=args)

    def public_args(self) -> dict[str, Any]:
        """Arguments with secrets removed (safe to write anywhere)."""
        return {k: v for k, v in sorted(self.args.items()) if k.lower() not in SECRET_ARGS}

    def key(self) -> str:
        """Canonical string used in cache keys and results (never contains secrets)."""
        return f"{self.provider}:{self.model}" + (
            "," + json.dumps(self.public_args(), sort_keys=True, default=str) if self.public_args() else ""
        )

    def cache_identity(self) -> str:
        """What determines a model's answers: provider, model and answer-relevant arguments.

        Transport details (:data:`TRANSPORT_ARGS`) are left out; ``cache_namespace=NAME`` stays in, so two
        different deployments that share a model name can be kept apart explicitly.
        """
        args = {k: v for k, v in self.public_args().items() if k.lower() not in TRANSPORT_ARGS}
        return f"{self.provider}:{self.model}" + ("," + json.dumps(args, sort_keys=True, default=str) if args else "")

    def adapter_args(self) -> dict[str, Any]:
        """The arguments handed to the adapter (harness-level ones such as ``cache_namespace`` removed)."""
        return {k: v for k, v in self.args.items() if k != CACHE_NAMESPACE_ARG}

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "args": self.public_args()}


def spec_label(spec: ModelSpec) -> str:
    """A short display name: ``provider:model``, or just the provider for model-less baselines."""
    return f"{spec.provider}:{spec.model}" if spec.model else spec.provider
