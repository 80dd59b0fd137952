"""The data recipes on Ray: ``build-corpus`` batches as one ``map_batches`` stage, ``generate`` in two halves.

A batch holds exactly the rows the local executor would put in it (``--batch-size``, input order), every random
choice is seeded by (recipe seed, row id, step), and batches land in input order: so the driver's
:func:`~privasis_bench.recipes.drivers.run_build_corpus` writes the same files as with the local executor.

``generate`` cannot run its batches side by side: batch *k* is refined against the diversity pool of every record
accepted before it, and which ids it tries depends on how many earlier rows failed. Its first half (seed to draft)
depends on nothing but the row's id, though, so :class:`RaySynthesis` drafts the ids the run will try next on a
``map_batches`` stage, ahead of time, while one Ray actor finishes the batches (refinement, filters, annotation,
grouping) one after another with the pool the driver hands it. The driver of
:func:`~privasis_bench.recipes.drivers.run_generate` is unchanged, and so is what it writes.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generator, Iterator

import numpy as np

from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.distributed.cluster import (
    BatchStage,
    RayOptions,
    Stage,
    check_resources,
    connect,
    landed,
    ray_error,
    run_stages,
)
from privasis_bench.distributed.nodes import NodeWatch
from privasis_bench.distributed.shards import batch_key, merge_shards, shard_dir
from privasis_bench.distributed.workers import WorkerEngineConfig, build_worker_engine, close_shard, use_shard
from privasis_bench.engine.answers import AnswerPolicy
from privasis_bench.engine.cache import ResponseCache
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.protocol.judge import JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.recipes.config import RecipeConfig
from privasis_bench.recipes.corpus import CorpusContext, build_batch
from privasis_bench.recipes.diversity import Embedder
from privasis_bench.recipes.seeds import SeedFiles
from privasis_bench.recipes.steps import engine_ask
from privasis_bench.recipes.synthesis import SynthesisContext, draft_batch, finish_batch

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


def _no_calls(requests: Any) -> Any:  # pragma: no cover - a half that must not ask the model
    raise RuntimeError("this half of the synthesis makes no model calls")


@dataclass
class FinishBatch:
    """A drafted batch and the diversity pool each of its rows is refined against."""

    key: str
    rows: Rows
    pools: dict[str, np.ndarray | None]


class DraftStage(BatchStage):
    """The first half of ``generate`` (seed to draft) over one chunk of ids, with the worker's own model engine."""

    def __init__(self, recipe: RecipeConfig, files: SeedFiles, model: WorkerEngineConfig) -> None:
        self.recipe, self.files, self.model = recipe, files, model
        self.engine = build_worker_engine(model)

    def run(self, item: tuple[str, list[str], dict[str, int]]) -> Rows:
        """Draft the ids of one chunk, each at its retry round (answers cached in the chunk's shard)."""
        key, ids, rounds = item
        shard = use_shard(self.engine, self.model, "gen-draft-" + key)
        try:
            ctx = SynthesisContext(recipe=self.recipe, files=self.files, ask=engine_ask(self.engine), judge_ask=_no_calls,
                                   embed=_no_calls, rounds=rounds)
            return draft_batch(ids, ctx)
        finally:
            close_shard(self.engine, shard)


class FinishWorker(BatchStage):
    """The second half of ``generate`` on one Ray actor: refine against the given pool, filter, annotate, group."""

    def __init__(self, recipe: RecipeConfig, files: SeedFiles, model: WorkerEngineConfig, judge: WorkerEngineConfig) -> None:
        self.recipe, self.files, self.model, self.judge = recipe, files, model, judge
        self.engine, self.judge_engine = build_worker_engine(model), build_worker_engine(judge)
        self.embed = Embedder(recipe.synthesis.embedding_model)

    def run(self, item: FinishBatch) -> Rows:
        """Finish one batch; each engine's answers go to one shard for the whole run (batches finish one at a time
        here, so a later batch finds what an earlier one asked, as it does in the main cache locally)."""
        shards = [(self.engine, use_shard(self.engine, self.model, "gen-finish-model")),
                  (self.judge_engine, use_shard(self.judge_engine, self.judge, "gen-finish-judge"))]
        try:
            ctx = SynthesisContext(recipe=self.recipe, files=self.files, ask=engine_ask(self.engine),
                                   judge_ask=engine_ask(self.judge_engine), embed=self.embed, pools=item.pools)
            return finish_batch(item.rows, ctx)
        finally:
            for engine, shard in shards:
                close_shard(engine, shard)


class RaySynthesis:
    """``generate``'s two halves on a Ray cluster (see the module docstring); same methods as ``LocalSynthesis``.

    Drafting goes in waves: when a batch names an id not drafted yet, the ids the run will try next if nothing
    fails from there on (every one of them will be tried) are drafted in chunks of ``batch_size`` on a
    ``map_batches`` stage, whose output the driver reads as it needs it; only failures make another wave.
    """

    def __init__(self, ray: RayOptions, engines: RecipeEngines, out_dir: Path, *, recipe: RecipeConfig, files: SeedFiles,
                 spec: ModelSpec, judge_spec: ModelSpec, batch_size: int) -> None:
        self.ray, self.cache, self.batch_size = ray, engines.cache, batch_size
        self.shards = shard_dir(self.cache, f"{out_dir.resolve()}|generate") if self.cache is not None else None
        if self.shards is not None:
            merge_shards(self.cache, self.shards)  # type: ignore[arg-type]  # answers left by a crashed run
        model = engines.config(spec, "model", ray, self.shards)
        self.draft_stage = Stage(DraftStage, {"recipe": recipe, "files": files, "model": model}, gpus=ray.gpus_per_worker)
        self.finish_args = {"recipe": recipe, "files": files, "model": model,
                            "judge": engines.config(judge_spec, "judge", ray, self.shards)}
        self.planned: set[str] = set()
        self.ready: dict[str, dict[str, Any]] = {}
        self.waves: list[Generator[Rows, None, None]] = []
        self._actor: Any = None

    def drafted(self, batch: list[str], ahead: Callable[[], list[str]], rounds: dict[str, int] | None = None) -> Rows:
        """The drafted rows of ``batch``, drafting a new wave first when one of its ids is not planned yet (ids
        are drafted at the retry round ``rounds`` gives them, default 0)."""
        rounds = rounds or {}
        if any(i not in self.planned for i in batch):
            wave = [i for i in ahead() if i not in self.planned]
            chunks = [wave[k : k + self.batch_size] for k in range(0, len(wave), self.batch_size)]
            self.planned.update(wave)
            items = [(batch_key(*c), c, {i: rounds[i] for i in c if i in rounds}) for c in chunks]
            self.waves.append(run_stages(self.ray, items, [self.draft_stage]))
        while any(i not in self.ready for i in batch):
            if not self.waves:
                raise RuntimeError(f"generate on ray: no draft for {[i for i in batch if i not in self.ready][0]}")
            rows = next(self.waves[0], None)
            if rows is None:
                self.waves.pop(0)
                continue
            self.ready.update((r["id"], r) for r in rows)
        return [self.ready.pop(i) for i in batch]

    def finished(self, rows: Rows, pools: dict[str, np.ndarray | None], *, again: bool = False) -> Rows:
        """``rows`` finished by the actor against their ``pools`` (an actor that dies is restarted and the batch run
        again; a row finished ``again`` finds its earlier calls in the run's cache shard)."""
        ray = connect(self.ray)
        if self._actor is None:
            check_resources(ray, self.ray)
            actor_class = ray.remote(FinishWorker).options(num_cpus=self.ray.cpus_per_worker, num_gpus=self.ray.gpus_per_worker or None,
                                                          resources=self.ray.actor_resources(), max_restarts=3, max_task_retries=3)
            self._actor = actor_class.remote(**self.finish_args)
        item = FinishBatch(batch_key(*(r["id"] for r in rows)), rows, pools)
        try:
            ref = self._actor.run_pickled.remote(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
            with NodeWatch(ray, self.ray.actor_resources() or {}, self.ray.cpus_per_worker, self.ray.node_wait_s) as watch:
                while not ray.wait([ref], timeout=0.5)[0]:  # never blocked on Ray for long: the watch can stop the run
                    watch.check()
            payload = ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - a failure of Ray itself or an actor that cannot be restarted
            raise ray_error(exc) from None
        return landed(payload)

    def close(self) -> None:
        """Stop the actor and the draft waves, and merge the cache shards into the main cache."""
        for wave in self.waves:
            wave.close()  # a draft wave not read to its end stops there
        self.waves.clear()
        if self._actor is not None:
            connect(self.ray).kill(self._actor)
            self._actor = None
        if self.shards is not None:
            merge_shards(self.cache, self.shards)  # type: ignore[arg-type]
