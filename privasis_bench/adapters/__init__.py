"""Model adapters: the adapter contract (:mod:`base`), model specs, the provider registry and every back-end.

Stable public API for plugin authors: ``privasis_bench.adapters.base.Adapter``, ``ChatRequest``, ``ChatResult``,
``AdapterError`` and the ``privasis_bench.adapters`` entry-point group.

May import: ``privasis_bench.errors``, ``data.records`` (for type hints) and ``data.loading.hub_reachable`` (the
``hf:`` adapter's quick hub probe). Never the engine, protocol, pipeline, results or CLI.
"""

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.spec import ModelSpec

__all__ = ["Adapter", "AdapterError", "ChatRequest", "ChatResult", "ModelSpec", "Usage"]
