"""``build-corpus`` on Ray: each batch of input rows is one ``map_batches`` call of the recipe's batch function.

A batch holds exactly the rows the local executor would put in it (``--batch-size``, input order), every random
choice is seeded by (recipe seed, row id, step), and batches land in input order: so the driver's
:func:`~privasis_bench.recipes.drivers.run_build_corpus` writes the same files as with the local executor.

``generate`` stays local: its batch *k* needs the diversity pool made of every record accepted by batches before
it (and which ids it tries depends on how many of those failed), so its batches cannot run side by side without
changing what it produces.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.distributed.cluster import BatchStage, RayOptions, Stage, run_stages
from privasis_bench.distributed.shards import batch_key, merge_shards, shard_dir
from privasis_bench.distributed.workers import WorkerEngineConfig, build_worker_engine, close_shard, use_shard
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.protocol.judge import JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.recipes.config import RecipeConfig
from privasis_bench.recipes.corpus import CorpusContext, build_batch
from privasis_bench.recipes.steps import engine_ask

Rows = list[dict[str, Any]]


@dataclass
class CorpusBatch:
    """The input rows of one batch (what comes back: the batch's working rows, failed ones with ``error``)."""

    key: str
    rows: Rows


class CorpusStage(BatchStage):
    """Runs :func:`~privasis_bench.recipes.corpus.build_batch` over one batch with the worker's own engines."""

    def __init__(self, recipe: RecipeConfig, model: WorkerEngineConfig, judge: WorkerEngineConfig | None,
                 judge_prompts: JudgePrompts, judge_settings: JudgeSettings) -> None:
        self.recipe, self.model, self.judge = recipe, model, judge
        self.judge_prompts, self.judge_settings = judge_prompts, judge_settings
        self.engine = build_worker_engine(model)
        self.judge_engine = build_worker_engine(judge) if judge is not None else None

    def run(self, item: CorpusBatch) -> Rows:
        """Build one batch (each engine's answers cached in the batch's own shard)."""
        shards = [(self.engine, use_shard(self.engine, self.model, "corpus-model-" + item.key))]
        judge_engine = self.judge_engine
        if judge_engine is not None:
            shards.append((judge_engine, use_shard(judge_engine, self.judge, "corpus-judge-" + item.key)))  # type: ignore[arg-type]
        try:
            ctx = CorpusContext(recipe=self.recipe, ask=engine_ask(self.engine), judge_prompts=self.judge_prompts,
                                judge_settings=self.judge_settings,
                                judge_ask=(lambda reqs: judge_engine.run(reqs, desc="label")) if judge_engine else None)
            return build_batch(item.rows, ctx)
        finally:
            for engine, shard in shards:
                close_shard(engine, shard)


@dataclass(frozen=True)
class RecipeEngines:
    """How the recipe's engines are built on workers (the settings ``_Engines`` of the recipe CLI uses locally)."""

    retry: RetryPolicy
    answers: AnswerPolicy
    concurrency: int
    cache: ResponseCache | None

    def config(self, spec: ModelSpec, role: str, ray: RayOptions, shards: Path | None) -> WorkerEngineConfig:
        """A worker engine config for ``spec`` under ``role``."""
        return WorkerEngineConfig(spec=spec, role=role, retry=self.retry, answers=self.answers, concurrency=self.concurrency,
                                  base_urls=ray.base_urls if role == "model" else ray.judge_base_urls,
                                  main_cache=str(self.cache.path) if self.cache is not None else None,
                                  shard_dir=str(shards) if shards is not None else None)


def corpus_batches_on_ray(ray: RayOptions, engines: RecipeEngines, out_dir: Path, *, recipe: RecipeConfig, spec: ModelSpec,
                          judge_spec: ModelSpec | None, judge_prompts: JudgePrompts,
                          judge_settings: JudgeSettings) -> Callable[[list[Rows]], Iterator[Rows]]:
    """A ``map_batches`` function for :func:`run_build_corpus`: each batch's rows built on the cluster, in order."""

    def run(batches: list[Rows]) -> Iterator[Rows]:
        cache = engines.cache
        shards = shard_dir(cache, f"{out_dir.resolve()}|build-corpus") if cache is not None else None
        if shards is not None:
            merge_shards(cache, shards)  # type: ignore[arg-type]  # answers left by a crashed run
        stage = Stage(CorpusStage, {
            "recipe": recipe, "model": engines.config(spec, "model", ray, shards),
            "judge": engines.config(judge_spec, "judge", ray, shards) if judge_spec is not None else None,
            "judge_prompts": judge_prompts, "judge_settings": judge_settings}, gpus=ray.gpus_per_worker)
        work = [CorpusBatch(batch_key(*(str(r.get("id")) for r in rows)), rows) for rows in batches]
        try:
            yield from run_stages(ray, work, [stage])
        finally:
            if shards is not None:
                merge_shards(cache, shards)  # type: ignore[arg-type]

    return run
