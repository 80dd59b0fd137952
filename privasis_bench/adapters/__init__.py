"""Model adapters: the registry of providers and the adapter contract."""

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.spec import ModelSpec

__all__ = ["Adapter", "AdapterError", "ChatRequest", "ChatResult", "ModelSpec", "Usage"]
