"""Resumable drivers: feed batches of rows to a recipe's batch function and persist what each batch produced.

Finished rows are appended the moment their batch ends; failed rows go to ``failures.jsonl`` with the step and
the reason (a re-run tries them again; calls already answered come from the response cache). Rows whose id is
already finished are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

from privasis_bench.recipes.store import RowStore, read_jsonl
from privasis_bench.recipes.corpus import CorpusContext, build_batch, to_benchmark_row
from privasis_bench.errors import DataError

Log = Callable[[str], None]
SPLITS = ("vanilla", "hard")


def read_inputs(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Input rows from JSONL files; a file that is missing or holds no row is a one-line error."""
    rows: list[dict[str, Any]] = []
    for path in paths:
        if not Path(path).is_file():
            raise DataError(f"--input {path}: file not found")
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
                     log: Log = print) -> dict[str, int]:
    """Build benchmark rows for every input row not yet finished; returns counts of this run."""
    done = store.done_ids()
    todo = [r for r in inputs if str(r.get("id")) not in done]
    counts = {"inputs": len(inputs), "resumed": len(inputs) - len(todo), "built": 0, "failed": 0}
    for start in range(0, len(todo), batch_size):
        rows = build_batch(todo[start : start + batch_size], ctx)
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
    """A three-line task YAML evaluating ``data_file`` (next to it) with the sample task's settings."""
    from privasis_bench.tasks.registry import builtin_tasks_dir

    safe = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)
    base = builtin_tasks_dir() / "privasis_sample.yaml"
    return f"task: {safe}\ninclude: {base}\ndataset: {{data_files: {data_file}}}\n"
