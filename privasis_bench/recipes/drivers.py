"""Resumable drivers: feed batches of rows to a recipe's batch function and persist what each batch produced.

Finished rows are appended the moment their batch ends; failed rows go to ``failures.jsonl`` with the step, the
reason and the retry round (a later run tries them again with new samples; see :mod:`~privasis_bench.recipes.store`).
Rows whose id is already finished are skipped; calls already answered come from the response cache.
"""

from __future__ import annotations

import copy
import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from privasis_bench.errors import DataError
from privasis_bench.fsutil import loads_json, read_text
from privasis_bench.recipes.corpus import CorpusContext, build_batch, to_benchmark_row
from privasis_bench.recipes.steps import row_rng
from privasis_bench.recipes.store import RowStore
from privasis_bench.recipes.synthesis import (
    SynthesisContext,
    draft_batch,
    finish_batch,
    to_corpus_row,
    validate_corpus_row,
)

Log = Callable[[str], None]
#: Runs a list of batches (input rows) and yields each batch's working rows, in order.
MapBatches = Callable[[list[list[dict[str, Any]]]], Iterator[list[dict[str, Any]]]]
SPLITS = ("vanilla", "hard")


def _unfinished(path: Path) -> str:
    """A hint when ``path`` is the rows file of a recipe run that produced no row (its sidecar is there)."""
    meta = path.with_name(f"{path.stem}.meta.json")
    if not meta.is_file():
        return ""
    failures = path.with_name("failures.jsonl")
    seen = f"; its failures are in {failures}" if failures.is_file() else ""
    return (f" (the recipe run writing {path.parent} has produced no row yet{seen}; re-run that command to "
            "retry, then use its output)")


def read_inputs(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Input rows from JSONL files; a file that is missing or holds no row is a one-line error."""
    rows: list[dict[str, Any]] = []
    for path in paths:
        if not Path(path).is_file():
            raise DataError(f"--input {path}: file not found{_unfinished(Path(path))}")
        text = read_text(path, "--input JSONL file")  # a binary or non-UTF-8 file: one line naming it (and the line)
        got = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                row = loads_json(line, f"--input {path}:{number}")
                if not isinstance(row, dict):
                    raise DataError(f"--input {path}:{number}: expected a JSON object, got {type(row).__name__}")
                got.append(row)
        if not got:
            raise DataError(f"--input {path}: no JSON rows in the file{_unfinished(Path(path))}")
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
    retry, skip = store.retry_plan()
    todo = [{**r, "_round": retry.get(str(r.get("id")), 0)} for r in inputs
            if str(r.get("id")) not in done and str(r.get("id")) not in skip]
    counts = {"inputs": len(inputs), "resumed": len(done & {str(r.get("id")) for r in inputs}), "built": 0, "failed": 0,
              "retried": sum(r["_round"] > 0 for r in todo), "not_retried_this_round": len(skip),
              "round": store.rounds_completed, "ranking_unparsed": 0}
    starts = range(0, len(todo), batch_size)
    batches = [todo[start : start + batch_size] for start in starts]
    built = map_batches(batches) if map_batches is not None else (build_batch(b, ctx) for b in batches)
    for start, rows in zip(starts, built):
        ok = [r for r in rows if not r.get("error")]
        bad = [r for r in rows if r.get("error")]
        store.add(to_benchmark_row(r) for r in ok)
        store.add_failures({**r, "stats": _corpus_stats(r)} for r in bad)
        counts["built"] += len(ok)
        counts["failed"] += len(bad)
        counts["ranking_unparsed"] += sum(bool(r.get("ranking", {}).get("unparsed")) for r in ok)
        for r in bad:
            log(f"{r['id']}: failed at {r['error']['step']}: {r['error']['message']}")
        log(f"{min(start + batch_size, len(todo))}/{len(todo)} rows processed ({counts['built']} built, {counts['failed']} failed)")
    write_splits(store)
    final = store.rows()
    summary = {**counts, "rows": len(final), **{s: sum(r.get("split") == s for r in final) for s in (*SPLITS, "unscored")},
               "failures_pending": len(store.failures())}
    rows, failures = store.attempts()
    cumulative = {**_attempt_counts(rows, failures),
                  "ranking_unparsed": sum(bool(((r.get("pipeline") or {}).get("ranking") or {}).get("unparsed"))
                                          for r in rows)
                  + sum(bool((f.get("stats") or {}).get("ranking_unparsed")) for f in failures)}
    store.complete_round(summary, cumulative)
    return {**summary, "cumulative": cumulative}


def _corpus_stats(row: dict[str, Any]) -> dict[str, Any]:
    """A build-corpus row's own statistics as far as it got: chunks, whether its ranking was readable, targets."""
    return {"chunks": len(row.get("chunks") or []), "targets": len(row.get("targets") or []),
            "ranking_unparsed": bool((row.get("ranking") or {}).get("unparsed"))}


def _attempt_counts(rows: list[dict[str, Any]], failures: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over every attempt on record (all runs): finished rows, failed attempts and at which step."""
    steps: dict[str, int] = {}
    for f in failures:
        steps[str(f.get("step"))] = steps.get(str(f.get("step")), 0) + 1
    return {"rows": len(rows), "failed_attempts": len(failures), "failed_steps": dict(sorted(steps.items()))}


def acceptance(refinement: list[dict[str, Any]]) -> dict[str, Any]:
    """What the refinement step did over these revision attempts: how many were tried, accepted, judged better."""
    return {
        "revisions": len(refinement),
        "accepted": sum(bool(s.get("accepted")) for s in refinement),
        "judge_preferred_revision": sum(s.get("judge") == "revised" for s in refinement),
        "judge_unparsed": sum(s.get("judge") == "unparsed" for s in refinement),
        "mean_delta_vendi": float(np.mean([s["delta_vendi"] for s in refinement])) if refinement else None,
    }


def write_splits(store: RowStore) -> list[Path]:
    """``vanilla.jsonl`` / ``hard.jsonl`` from the finished rows, and a task YAML for each file."""
    rows = sorted(store.rows(), key=lambda r: r["id"])
    store.path.touch()  # task.yaml names it, rows or not
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


def pool_before(row_id: str, vectors: dict[str, np.ndarray], size: int, seed: int) -> np.ndarray | None:
    """The diversity pool of ``row_id``: embeddings of the records finished before it in id order (at most
    ``size`` of them, drawn with a generator keyed by the row), stacked in id order; None when there is none."""
    earlier = sorted(i for i in vectors if i < row_id)
    if not earlier:
        return None
    if len(earlier) > size:
        picked = row_rng(seed, row_id, "pool").choice(len(earlier), size=size, replace=False)
        earlier = [earlier[k] for k in sorted(picked)]
    return np.vstack([vectors[i] for i in earlier])


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a.shape == b.shape and bool(np.array_equal(a, b)))


class _MemoAsk:
    """An :data:`Ask` that remembers the answers of one batch, so a row refined again (against a larger pool)
    re-asks nothing it already asked, even without the response cache."""

    def __init__(self, ask: Callable[[list[Any], str], list[Any]]) -> None:
        self.ask, self.answers = ask, {}

    def __call__(self, requests: list[Any], desc: str) -> list[Any]:
        keys = [r.cache_key("") for r in requests]
        todo = [(k, r) for k, r in dict(zip(keys, requests)).items() if k not in self.answers]
        if todo:
            for (key, _), result in zip(todo, self.ask([r for _, r in todo], desc), strict=True):
                self.answers[key] = result
        results = [self.answers[k] for k in keys]
        for key, result in zip(keys, results):
            if not result.ok:  # a failed call is asked again next time
                self.answers.pop(key, None)
        return results


class LocalSynthesis:
    """Where ``generate`` runs its batches by default: both halves of each batch in this process, one after another.

    Another executor (e.g. :class:`~privasis_bench.distributed.recipes.RaySynthesis`) offers the same methods.
    """

    def __init__(self, ctx: SynthesisContext) -> None:
        self.ctx = ctx
        self.ask, self.judge_ask = _MemoAsk(ctx.ask), _MemoAsk(ctx.judge_ask)

    def drafted(self, batch: list[str], ahead: Callable[[], list[str]], rounds: dict[str, int] | None = None) -> list[dict[str, Any]]:
        """The working rows of ``batch`` up to their drafts (``rounds``: retry round per id, default 0); ``ahead()``
        lists the ids the run will try next if no row fails from here on (``batch`` first), for executors that
        draft ahead of time."""
        return draft_batch(batch, replace(self.ctx, rounds=rounds or {}))

    def finished(self, rows: list[dict[str, Any]], pools: dict[str, np.ndarray | None], *, again: bool = False) -> list[dict[str, Any]]:
        """``rows`` refined against their pools, filtered, annotated and grouped (``again``: a row of the batch
        just finished, refined again against its complete pool; its calls are remembered from the batch)."""
        if not again:
            self.ask.answers.clear()
            self.judge_ask.answers.clear()
        return finish_batch(rows, replace(self.ctx, ask=self.ask, judge_ask=self.judge_ask, pools=pools))


def run_generate(n: int, ctx: SynthesisContext, store: RowStore, *, batch_size: int = 4, log: Log = print,
                 steps: LocalSynthesis | None = None) -> dict[str, Any]:
    """Synthesize until ``n`` corpus rows are finished (trying at most ``n * max_attempts_factor`` ids).

    Ids are ``<recipe>-00000``, ``<recipe>-00001``, ... and are tried in order; finished ids are skipped, ids that
    failed in an earlier round are tried again with new samples (see :mod:`store`). A row's refinement is measured
    against the records finished before it in id order, so what a row becomes does not depend on batching or on
    where an earlier run stopped: a batch is refined against what earlier batches finished, then, in id order, a
    row with an earlier row of its own batch finished is refined again against that complete pool (its repeated
    calls come from memory). ``steps`` says where the halves run (default: here, with ``ctx``).
    """
    recipe = ctx.recipe
    steps = steps or LocalSynthesis(ctx)
    finished = {r["id"]: r for r in store.rows()}
    retry, skip = store.retry_plan()
    diverse = recipe.synthesis.refine_steps > 0
    vectors: dict[str, np.ndarray] = {}
    if finished and diverse and len(finished) < n:
        order = sorted(finished)
        vectors = dict(zip(order, ctx.embed([finished[i]["record"] for i in order])))
    done = set(finished)
    ids = [f"{recipe.recipe}-{i:05d}" for i in range(n * recipe.synthesis.max_attempts_factor)]
    counts: dict[str, Any] = {"requested": n, "resumed": len(done), "generated": 0, "failed": 0, "failed_steps": {},
                              "retried": 0, "round": store.rounds_completed, "refined_again": 0}
    refinement: list[dict[str, Any]] = []
    cursor = 0

    def pool(row_id: str, known: dict[str, np.ndarray]) -> np.ndarray | None:
        return pool_before(row_id, known, recipe.synthesis.pool_size, recipe.seed) if diverse else None

    while len(done) < n and cursor < len(ids):
        batch, start = [], cursor
        while cursor < len(ids) and len(batch) < min(batch_size, n - len(done)):
            if ids[cursor] not in done and ids[cursor] not in skip:
                batch.append(ids[cursor])
            cursor += 1
        if not batch:
            break

        def ahead(start: int = start, wanted: int = n - len(done)) -> list[str]:
            return list(itertools.islice((i for i in ids[start:] if i not in done and i not in skip), wanted))

        pools = {i: pool(i, vectors) for i in batch}
        drafted = steps.drafted(batch, ahead, retry)
        snapshot = copy.deepcopy(drafted)
        first_pass = {r["id"]: r for r in steps.finished(drafted, pools)}
        rows, here = [], {}
        for draft in sorted(snapshot, key=lambda r: r["id"]):
            rid, row = draft["id"], first_pass[draft["id"]]
            if diverse and not draft.get("error") and any(i < rid for i in here):
                complete = pool(rid, {**vectors, **here})
                if not _same(complete, pools[rid]):
                    row = steps.finished([copy.deepcopy(draft)], {rid: complete}, again=True)[0]
                    counts["refined_again"] += 1
            if not row.get("error") and diverse:
                here[rid] = ctx.embed([row["text"]])[0]
            rows.append(row)
        ok = [r for r in rows if not r.get("error")]
        bad = [r for r in rows if r.get("error")]
        out = [to_corpus_row(r) for r in ok]
        for row in out:
            validate_corpus_row(row)
        for row in rows:  # every revision tried counts, also on rows that failed later
            refinement += row.get("stats", {}).get("refinement", [])
        store.add(out)
        store.add_failures(bad)
        vectors.update(here)
        done |= {r["id"] for r in out}
        counts["generated"] += len(out)
        counts["failed"] += len(bad)
        counts["retried"] += sum(i in retry for i in batch)
        for r in bad:
            step = r["error"]["step"]
            counts["failed_steps"][step] = counts["failed_steps"].get(step, 0) + 1
            log(f"{r['id']}: failed at {step}: {r['error']['message']}")
        log(f"{len(done)}/{n} records finished ({counts['failed']} failed so far)")
    counts["rows"] = len(done)
    counts["acceptance"] = acceptance(refinement)  # this run's
    rows, failures = store.attempts()
    cumulative = {**_attempt_counts(rows, failures), "acceptance": acceptance(
        [s for r in rows + failures for s in (r.get("stats") or {}).get("refinement", [])])}
    store.complete_round(counts, cumulative)
    return {**counts, "cumulative": cumulative}
