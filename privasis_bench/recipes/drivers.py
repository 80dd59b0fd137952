"""Resumable drivers: feed batches of rows to a recipe's batch function and persist what each batch produced.

Finished rows are appended the moment their batch ends; failed rows go to ``failures.jsonl`` with the step and
the reason (a re-run tries them again; calls already answered come from the response cache). Rows whose id is
already finished are skipped.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from privasis_bench.fsutil import read_text
from privasis_bench.errors import DataError
from privasis_bench.recipes.corpus import CorpusContext, build_batch, row_rng, to_benchmark_row
from privasis_bench.recipes.store import RowStore, read_jsonl
from privasis_bench.recipes.synthesis import (SynthesisContext, draft_batch, finish_batch, to_corpus_row,
                                              validate_corpus_row)

Log = Callable[[str], None]
#: Runs a list of batches (input rows) and yields each batch's working rows, in order.
MapBatches = Callable[[list[list[dict[str, Any]]]], Iterator[list[dict[str, Any]]]]
SPLITS = ("vanilla", "hard")


def read_inputs(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Input rows from JSONL files; a file that is missing or holds no row is a one-line error."""
    rows: list[dict[str, Any]] = []
    for path in paths:
        if not Path(path).is_file():
            raise DataError(f"--input {path}: file not found")
        read_text(path, "--input JSONL file")  # a binary or non-UTF-8 file: one line naming it (and the line)
        got = read_jsonl(path)
        if not got:
            raise DataError(f"--input {path}: no JSON rows in the file")
        rows += got
    ids = [str(r.get("id")) for r in rows]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise DataError(f"--input: duplicate id {dupes[0]!r} (ids must be unique)")
    return rows


def run_build_corpus(inputs: list[dict[str, Any]], ctx: CorpusContext, store: RowStore, *, batch_size: int = 8,
                     log: Log = print, map_batches: MapBatches | None = None) -> dict[str, int]:
    """Build benchmark rows for every input row not yet finished; returns counts of this run.

    ``map_batches`` runs the batches elsewhere (e.g. on a Ray cluster) and yields each batch's rows in order;
    by default each batch is built here with ``ctx``."""
    done = store.done_ids()
    todo = [r for r in inputs if str(r.get("id")) not in done]
    counts = {"inputs": len(inputs), "resumed": len(inputs) - len(todo), "built": 0, "failed": 0}
    starts = range(0, len(todo), batch_size)
    batches = [todo[start : start + batch_size] for start in starts]
    built = map_batches(batches) if map_batches is not None else (build_batch(b, ctx) for b in batches)
    for start, rows in zip(starts, built):
        ok = [r for r in rows if not r.get("error")]
        bad = [r for r in rows if r.get("error")]
        store.add(to_benchmark_row(r) for r in ok)
        store.add_failures(bad)
        counts["built"] += len(ok)
        counts["failed"] += len(bad)
        for r in bad:
            log(f"{r['id']}: failed at {r['error']['step']}: {r['error']['message']}")
        log(f"{min(start + batch_size, len(todo))}/{len(todo)} rows processed ({counts['built']} built, {counts['failed']} failed)")
    write_splits(store)
    final = store.rows()
    summary = {**counts, "rows": len(final), **{s: sum(r.get("split") == s for r in final) for s in (*SPLITS, "unscored")},
               "failures_pending": len(store.failures())}
    store.write_meta(summary)
    return summary


def write_splits(store: RowStore) -> list[Path]:
    """``vanilla.jsonl`` / ``hard.jsonl`` from the finished rows, and a task YAML for each file."""
    rows = sorted(store.rows(), key=lambda r: r["id"])
    written = []
    for split, chosen in (("all", rows), *((s, [r for r in rows if r.get("split") == s]) for s in SPLITS)):
        data = store.path if split == "all" else store.dir / f"{split}.jsonl"
        if split != "all":
            tmp = data.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in chosen), encoding="utf-8")
            tmp.replace(data)
        yaml_path = store.dir / ("task.yaml" if split == "all" else f"task_{split}.yaml")
        yaml_path.write_text(task_yaml(f"{store.dir.name}_{split}", data.name), encoding="utf-8")
        written.append(yaml_path)
    return written


def task_yaml(name: str, data_file: str) -> str:
    """A task YAML evaluating ``data_file`` (next to it) with the protocol's settings (budgets 9024 / 512 / 4096)."""
    from privasis_bench.tasks.registry import builtin_tasks_dir

    safe = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)
    base = builtin_tasks_dir() / "_privasis_base.yaml"
    return f"task: {safe}\ninclude: {base}\ndataset: {{path: null, revision: null, data_files: {data_file}}}\n"


def _pool(embeddings: list[np.ndarray], size: int, rng: np.random.Generator) -> np.ndarray | None:
    if not embeddings:
        return None
    if len(embeddings) > size:
        embeddings = [embeddings[i] for i in rng.choice(len(embeddings), size=size, replace=False)]
    return np.vstack(embeddings)


class LocalSynthesis:
    """Where ``generate`` runs its batches by default: both halves of each batch in this process, one after another.

    Another executor (e.g. :class:`~privasis_bench.distributed.recipes.RaySynthesis`) offers the same two methods.
    """

    def __init__(self, ctx: SynthesisContext) -> None:
        self.ctx = ctx

    def drafted(self, batch: list[str], ahead: Callable[[], list[str]]) -> list[dict[str, Any]]:
        """The working rows of ``batch`` up to their drafts; ``ahead()`` lists the ids the run will try next if no
        row fails from here on (``batch`` first), for executors that draft ahead of time."""
        return draft_batch(batch, self.ctx)

    def finished(self, rows: list[dict[str, Any]], pool: np.ndarray | None) -> list[dict[str, Any]]:
        """``rows`` refined against ``pool``, filtered, annotated and grouped."""
        return finish_batch(rows, replace(self.ctx, pool=pool))


def run_generate(n: int, ctx: SynthesisContext, store: RowStore, *, batch_size: int = 4, log: Log = print,
                 steps: LocalSynthesis | None = None) -> dict[str, Any]:
    """Synthesize until ``n`` corpus rows are finished (trying at most ``n * max_attempts_factor`` ids).

    Ids are ``<recipe>-00000``, ``<recipe>-00001``, ...; finished ids are skipped, failed ones tried again
    (their answered calls come from the cache). The diversity pool holds the embeddings of finished rows, so
    batches finish one after another; ``steps`` says where their halves run (default: here, with ``ctx``).
    """
    recipe = ctx.recipe
    steps = steps or LocalSynthesis(ctx)
    finished = store.rows()
    needed = len(finished) < n and recipe.synthesis.refine_steps > 0
    embeddings = list(ctx.embed([r["record"] for r in finished])) if finished and needed else []
    done = {r["id"] for r in finished}
    ids = [f"{recipe.recipe}-{i:05d}" for i in range(n * recipe.synthesis.max_attempts_factor)]
    counts: dict[str, Any] = {"requested": n, "resumed": len(done), "generated": 0, "failed": 0, "failed_steps": {}}
    refinement: list[dict[str, Any]] = []
    cursor = 0
    while len(done) < n and cursor < len(ids):
        batch, start = [], cursor
        while cursor < len(ids) and len(batch) < min(batch_size, n - len(done)):
            if ids[cursor] not in done:
                batch.append(ids[cursor])
            cursor += 1
        if not batch:
            break

        def ahead(start: int = start, wanted: int = n - len(done)) -> list[str]:
            return list(itertools.islice((i for i in ids[start:] if i not in done), wanted))

        pool = _pool(embeddings, recipe.synthesis.pool_size, row_rng(recipe.seed, batch[0], "pool"))
        rows = steps.finished(steps.drafted(batch, ahead), pool)
        ok = [r for r in rows if not r.get("error")]
        bad = [r for r in rows if r.get("error")]
        out = [to_corpus_row(r) for r in ok]
        for row in out:
            validate_corpus_row(row)
            refinement += row["stats"].get("refinement", [])
        store.add(out)
        store.add_failures(bad)
        if out and recipe.synthesis.refine_steps:
            embeddings += list(ctx.embed([r["record"] for r in out]))
        done |= {r["id"] for r in out}
        counts["generated"] += len(out)
        counts["failed"] += len(bad)
        for r in bad:
            step = r["error"]["step"]
            counts["failed_steps"][step] = counts["failed_steps"].get(step, 0) + 1
            log(f"{r['id']}: failed at {step}: {r['error']['message']}")
        log(f"{len(done)}/{n} records finished ({counts['failed']} failed so far)")
    counts["rows"] = len(done)
    counts["acceptance"] = {
        "revisions": len(refinement),
        "accepted": sum(s["accepted"] for s in refinement),
        "judge_preferred_revision": sum(s["judge"] == "revised" for s in refinement),
        "judge_unparsed": sum(s["judge"] == "unparsed" for s in refinement),
        "mean_delta_vendi": float(np.mean([s["delta_vendi"] for s in refinement])) if refinement else None,
    }
    store.write_meta(counts)
    return counts
