"""A worker's engine: built from the model spec inside the worker, its answers cached in the batch's shard.

With several OpenAI-compatible base URLs (``--ray-base-urls``), a worker's calls go round-robin over one
adapter per URL; ``base_url`` is a transport argument, so cache keys and results do not depend on which server
answered. With ``gpus_per_worker`` > 0, the spec is an in-process engine (e.g. ``vllm:MODEL``) that each actor
loads once onto its own GPU (Ray sets ``CUDA_VISIBLE_DEVICES`` per actor).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.distributed.shards import ShardCache
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.engine.stats import EngineStats


@dataclass(frozen=True)
class WorkerEngineConfig:
    """Everything a worker needs to build its own engine (picklable; no open files or clients)."""

    spec: ModelSpec
    role: str
    retry: RetryPolicy
    answers: AnswerPolicy
    concurrency: int = 4
    rpm: float | None = None  # per worker
    base_urls: tuple[str, ...] = ()
    main_cache: str | None = None  # the main cache file (read-only for workers); None: --no-cache
    shard_dir: str | None = None


class RoundRobinAdapter(Adapter):
    """Spreads calls over several adapters of one model (one per base URL), one call each in turn."""

    def __init__(self, adapters: list[Adapter]) -> None:
        first = adapters[0]
        self.adapters = adapters
        self.model = getattr(first, "model", "")
        self._turn = itertools.cycle(range(len(adapters)))
        self.rankable, self.batched, self.cacheable = first.rankable, first.batched, first.cacheable
        self.deterministic = getattr(first, "deterministic", False)
        self.constrains = first.constrains

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """One call on the next adapter in turn."""
        return await self.adapters[next(self._turn)].agenerate(request)

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """One batch on the next adapter in turn."""
        return self.adapters[next(self._turn)].generate_batch(requests)

    async def aclose(self) -> None:
        """Close every adapter."""
        for adapter in self.adapters:
            await adapter.aclose()


class BookedAdapter(Adapter):
    """Writes every call down in the batch's shard while it is out (see :mod:`~privasis_bench.distributed.shards`),
    so that a call lost with its worker is still counted as paid."""

    def __init__(self, inner: Adapter) -> None:
        self.inner, self.model, self.args = inner, getattr(inner, "model", ""), getattr(inner, "args", {})
        self.rankable, self.batched, self.cacheable = inner.rankable, inner.batched, inner.cacheable
        self.sequential, self.constrains = inner.sequential, inner.constrains
        self.shard: ShardCache | None = None

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """One call, pending in the shard until it returns."""
        shard, call = self.shard, uuid.uuid4().hex
        if shard is not None:
            shard.sent(call)
        try:
            return await self.inner.agenerate(request)
        finally:
            if shard is not None:
                shard.returned(call)

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """One batch call, pending in the shard until it returns."""
        shard, call = self.shard, uuid.uuid4().hex
        if shard is not None:
            shard.sent(call)
        try:
            return self.inner.generate_batch(requests)
        finally:
            if shard is not None:
                shard.returned(call)

    def interrupt(self) -> None:
        """Interrupt the wrapped adapter."""
        self.inner.interrupt()

    async def aclose(self) -> None:
        """Close the wrapped adapter."""
        await self.inner.aclose()


def build_worker_adapter(config: WorkerEngineConfig) -> Adapter:
    """The adapter of ``config.spec``, round-robin over ``config.base_urls`` when there are any."""
    if not config.base_urls:
        return build_adapter(config.spec)
    specs = [replace(config.spec, args={**config.spec.args, "base_url": url}) for url in config.base_urls]
    adapters = [build_adapter(s) for s in specs]
    return adapters[0] if len(adapters) == 1 else RoundRobinAdapter(adapters)


def build_worker_engine(config: WorkerEngineConfig) -> Engine:
    """A worker's engine (no progress bars; its cache is set per batch by :func:`use_shard`)."""
    return Engine(BookedAdapter(build_worker_adapter(config)), config.spec, role=config.role, cache=None, retry=config.retry,
                  concurrency=config.concurrency, rpm=config.rpm, progress=False, answers=config.answers)


def use_shard(engine: Engine, config: WorkerEngineConfig, key: str, *, settle_on_close: bool = True) -> ShardCache | None:
    """Point ``engine`` at the shard of batch ``key`` (created on first use); the caller closes it after the batch.

    What an earlier attempt at the batch paid and never reported (its worker died) is added to ``engine``'s stats.
    ``settle_on_close=False`` when the batch goes on to another stage before it reaches the driver (which then
    settles the shard's books, :func:`~privasis_bench.distributed.shards.settle`).
    """
    if config.shard_dir is None or not engine.adapter.cacheable:
        engine.cache = None
        return None
    shard = ShardCache(Path(config.shard_dir) / f"{key}.sqlite", config.main_cache, role=config.role,
                       settle_on_close=settle_on_close)
    engine.stats.absorb(shard.inherited)  # paid by an earlier attempt at this batch that died: counted with this one
    engine.cache = shard
    if isinstance(engine.adapter, BookedAdapter):
        engine.adapter.shard = shard
    return shard


def close_shard(engine: Engine, shard: Any) -> None:
    """Detach and close a batch's shard."""
    engine.cache = None
    if isinstance(engine.adapter, BookedAdapter):
        engine.adapter.shard = None
    if shard is not None:
        shard.close()


def take_stats(engine: Engine) -> EngineStats:
    """What ``engine`` counted since the last call (its stats are started afresh): a batch's own calls and tokens."""
    spent, engine.stats = engine.stats, EngineStats()
    return spent
