"""``run`` / ``evaluate`` on Ray: a sanitize stage and a judge stage over batches of records.

The driver builds every request with the protocol's own code (:func:`build_sanitize_request`), leaves out what
is already finished (ok outputs in ``sanitized.jsonl`` with the same prompt, verdicts in ``judged.jsonl`` for the
same output and judge fingerprint), and sends the rest through two ``map_batches`` stages. As each batch lands it
appends the outputs to ``sanitized.jsonl`` (same JSONL format, same ``.meta.json`` settings as ``run_sanitize``)
and the verdicts to the ``judged.jsonl`` checkpoint. The command then goes on with its local code path, which
finds every output and verdict in place and makes no new call for them, so ``results.json`` and
``samples.jsonl`` are written by exactly the code a local run uses.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.records import Record
from privasis_bench.distributed.cluster import BatchStage, RayOptions, Stage, node_id, report_placement, run_stages
from privasis_bench.distributed.shards import batch_key, merge_shards, settle, shard_dir, unreported_spend
from privasis_bench.distributed.workers import (
    WorkerEngineConfig,
    build_worker_engine,
    close_shard,
    take_stats,
    use_shard,
)
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.stats import EngineStats
from privasis_bench.pipeline.flow import flow_window
from privasis_bench.pipeline.run import EngineOptions
from privasis_bench.pipeline.sanitize import OutputJournal, SanitizedOutput
from privasis_bench.protocol.checkpoint import CHECKPOINT_NAME, append_checkpoint, output_hash, read_checkpoint
from privasis_bench.protocol.judge import Judge, JudgeInput, JudgeStats
from privasis_bench.protocol.judging import JudgeChoice
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.tasks.config import TaskConfig


@dataclass
class EvalItem:
    """One record on its way through the stages: its request (None: output already there), output, verdict."""

    record: Record
    request: ChatRequest | None = None
    output: SanitizedOutput | None = None
    needs_judge: bool = True
    verdict: RecordVerdict | None = None
    output_sha: str | None = None
    fresh: bool = False  # the output was made by this run's sanitize stage


@dataclass
class EvalBatch:
    """A batch of records, what the stages made of it, the judge counts of its judge stage and what each role's
    engine spent on it (calls, tokens; added to the driver's engines so results and the ledger count them)."""

    key: str
    items: list[EvalItem]
    stats: JudgeStats = field(default_factory=JudgeStats)
    spent: dict[str, EngineStats] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)  # stage name -> the Ray node that ran it on this batch


class SanitizeStage(BatchStage):
    """Asks the model under test for every item with a request; builds its :class:`SanitizedOutput`."""

    def __init__(self, config: WorkerEngineConfig, answer_cue: str) -> None:
        self.config, self.answer_cue = config, answer_cue
        self.engine = build_worker_engine(config)

    def run(self, item: EvalBatch) -> EvalBatch:
        """Sanitize one batch (answers cached in its shard)."""
        todo = [it for it in item.items if it.request is not None]
        item.nodes["sanitize"] = node_id()
        if todo:
            shard = use_shard(self.engine, self.config, "sanitize-" + item.key, settle_on_close=False)
            try:
                results = self.engine.run([it.request for it in todo], desc="sanitize")  # type: ignore[misc]
            finally:
                close_shard(self.engine, shard)
                item.spent["model"] = take_stats(self.engine)
            for it, result in zip(todo, results):
                it.output = SanitizedOutput.from_result(it.record.id, it.request, result,  # type: ignore[arg-type]
                                                        answer_cue=self.answer_cue, model=self.engine.spec_key)
                it.request, it.fresh = None, True  # the record travels on; its request is no longer needed
        return item


class JudgeStage(BatchStage):
    """Judges every item that needs it with the protocol's judge, one chain per attribute."""

    def __init__(self, config: WorkerEngineConfig, choice: JudgeChoice) -> None:
        self.config, self.choice = config, choice
        self.engine = build_worker_engine(config)

    def run(self, item: EvalBatch) -> EvalBatch:
        """Judge one batch (answers cached in its shard)."""
        todo = [it for it in item.items if it.needs_judge]
        item.nodes["judge"] = node_id()
        inputs = []
        for it in todo:
            failed = it.output is None or not it.output.ok
            text = None if failed else it.output.output  # type: ignore[union-attr]
            it.output_sha = output_hash(text, failed)
            inputs.append(JudgeInput(it.record, text, output_failed=failed))
        if not inputs:
            return item
        judge = Judge(None, self.choice.prompts, self.choice.settings)

        async def judge_all() -> tuple[list[RecordVerdict], JudgeStats]:
            async with self.engine.stream("judge") as stream:
                return await judge.ajudge(inputs, stream.ask, window=flow_window(self.engine))

        shard = use_shard(self.engine, self.config, "judge-" + item.key, settle_on_close=False)
        try:
            verdicts, item.stats = self.engine.run_async(judge_all)
        finally:
            close_shard(self.engine, shard)
            item.spent["judge"] = take_stats(self.engine)
        for it, verdict in zip(todo, verdicts):
            it.verdict = verdict
        return item


def worker_config(spec: ModelSpec, role: str, options: EngineOptions, ray: RayOptions, shards: Path | None) -> WorkerEngineConfig:
    """The picklable engine settings of one role, as the local executor would use them."""
    local = role == "model"
    return WorkerEngineConfig(
        spec=spec, role=role, retry=options.retry, answers=options.answers if local else options.judge_answers,
        concurrency=options.concurrency if local else (options.judge_concurrency or options.concurrency),
        rpm=options.rpm if local else options.judge_rpm, base_urls=ray.base_urls if local else ray.judge_base_urls,
        main_cache=str(options.cache.path) if options.cache is not None else None,
        shard_dir=str(shards) if shards is not None else None)


def distributed_evaluation(
    task: TaskConfig, records: Sequence[Record], choice: JudgeChoice | None, task_dir: Path, *, ray: RayOptions,
    options: EngineOptions, model: tuple[ModelSpec, Engine] | None = None, outputs: dict[str, SanitizedOutput] | None = None,
    judge_engine: Engine | None = None, instruction: str | None = None, max_tokens: int | None = None,
    temperature: float | None = None,
) -> dict[str, int]:
    """Sanitize (with ``model``: its spec and the driver's engine) or take ``outputs``, and judge, on Ray.

    ``choice`` None: the task's family is not judged record by record (its scorer scores the finished outputs in
    the local pass, asking its roles there): only the model's rewrite runs on Ray.

    Fills ``sanitized.jsonl`` (+ meta) and ``judged.jsonl`` in ``task_dir``; returns counts of what was sent. The
    workers' calls and tokens are added to the stats of the driver's engines (``model[1]``, ``judge_engine``), so
    the usage in results and in the spend ledger is what the run paid wherever it ran (except the calls of a
    worker that died before its batch came back).
    """
    sanitized_path = task_dir / "sanitized.jsonl"
    items: list[EvalItem] = []
    if model is not None:
        items = _sanitize_items(task, records, model[1], sanitized_path, instruction=instruction or task.prompt.instruction,
                                max_tokens=max_tokens, temperature=temperature)
    else:
        items = [EvalItem(r, output=(outputs or {}).get(r.id)) for r in records]
    checkpoint = task_dir / CHECKPOINT_NAME
    fp = choice.fingerprint() if choice is not None else ""
    if choice is None or choice.spec is None:  # --judge none: nothing to ask, the local pass decides deterministically
        for it in items:
            it.needs_judge = False
    else:
        done = read_checkpoint(checkpoint, fp)
        for it in items:
            if it.request is None:
                failed = it.output is None or not it.output.ok
                it.needs_judge = (it.record.id, output_hash(None if failed else it.output.output, failed)) not in done  # type: ignore[union-attr]
    work = [it for it in items if it.request is not None or it.needs_judge]
    counts = {"sanitize": sum(it.request is not None for it in work), "judge": sum(it.needs_judge for it in work)}
    if not work:
        return counts
    shards = shard_dir(options.cache, f"{task_dir.resolve()}|{task.task}") if options.cache is not None else None
    driver_engines = {"model": model[1] if model is not None else None, "judge": judge_engine}
    if shards is not None:
        _merge(options.cache, shards, driver_engines)  # answers (and unreported spend) left by a stopped run
    stages = []
    if counts["sanitize"] and model is not None:
        stages.append(Stage(SanitizeStage, {"config": worker_config(model[0], "model", options, ray, shards),
                                             "answer_cue": task.prompt.answer_cue}, gpus=ray.gpus_per_worker))
    if counts["judge"] and choice is not None and choice.spec is not None:
        stages.append(Stage(JudgeStage, {"config": worker_config(choice.spec, "judge", options, ray, shards),
                                         "choice": choice}))
    size = ray.batch_size or 16
    batches = [EvalBatch(batch_key(*(it.record.id for it in work[i:i + size])), work[i:i + size])
               for i in range(0, len(work), size)]
    try:
        with open(sanitized_path, "a", encoding="utf-8") as fh:
            placed: dict[str, set[str]] = {}
            for batch in run_stages(ray, batches, stages):
                _land(batch, fh, checkpoint, fp)
                for stage_name, node in batch.nodes.items():
                    placed.setdefault(stage_name, set()).add(node)
                for role, spent in batch.spent.items():
                    if driver_engines.get(role) is not None:
                        driver_engines[role].stats.absorb(spent)  # type: ignore[union-attr]
                if shards is not None:  # counted: what the batch's shards hold is no longer unreported
                    settle(shards, ["sanitize-" + batch.key, "judge-" + batch.key])
            report_placement(node_id(), placed)
    finally:
        if shards is not None:
            _merge(options.cache, shards, driver_engines)
    return counts


def _merge(cache: Any, shards: Path, engines: dict[str, Engine | None]) -> None:
    """Merge the shards into the main cache, first counting what dead workers paid and never reported (a worker
    lost with its node while the run stopped, or a run stopped as a whole) as the spend of the driver's engines."""
    for role, spent in unreported_spend(shards).items():
        engine = engines.get(role)
        if engine is not None:
            engine.stats.absorb(spent)
    merge_shards(cache, shards)


def _land(batch: EvalBatch, fh: Any, checkpoint: Path, fp: str) -> None:
    """Append a finished batch's new outputs and verdicts (flushed and fsynced), as the local stages do."""
    lines = [json.dumps(it.output.to_dict(), ensure_ascii=False) + "\n" for it in batch.items if it.fresh and it.output]
    if lines:
        fh.write("".join(lines))
        fh.flush()
        os.fsync(fh.fileno())
    append_checkpoint(checkpoint, fp, [(it.output_sha, it.verdict) for it in batch.items
                                       if it.verdict is not None and it.output_sha is not None])


def _sanitize_items(task: TaskConfig, records: Sequence[Record], engine: Engine, out_path: Path, *, instruction: str,
                    max_tokens: int | None, temperature: float | None) -> list[EvalItem]:
    """Items with a request for every record whose output is missing, failed, made from another prompt or no longer
    accepted, as the local run's output journal decides (it also refuses an output file made with other settings
    and writes the meta sidecar)."""
    journal = OutputJournal(task, engine, out_path, instruction=instruction, max_tokens=max_tokens,
                            temperature=temperature)
    try:
        items = []
        for record in records:
            request = journal.request(record)
            prev = journal.reusable(record, request)
            items.append(EvalItem(record, request=request) if prev is None else EvalItem(record, output=prev))
        return items
    finally:
        journal.close()
