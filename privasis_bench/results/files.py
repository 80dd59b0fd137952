"""Results files: the results JSON, the samples JSONL, atomic writes and loading.

A run directory holds one sub-directory per task with ``results.json`` (settings, metrics with CIs,
breakdowns, counts, usage) and ``samples.jsonl`` (per record: the output and every verdict), enough
to recompute every number without calling a model (``privasis-bench rescore``). Every file is
written to a temporary name, fsynced and renamed into place, so a crash never leaves a truncated
file under the final name."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Iterable, Iterator

from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import FileProblem, loads_json, read_text
from privasis_bench.protocol.verdicts import verdicts_from_rows  # noqa: F401  (read here by older callers)

RESULTS_NAME = "results.json"



SAMPLES_NAME = "samples.jsonl"



RESULTS_FORMAT = "privasis-bench/results/1"



SAMPLES_FORMAT = "privasis-bench/samples/1"



class ResultsError(PrivasisError):
    """A results or samples file is missing or unreadable."""



def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file, fsync and ``os.replace`` (all or nothing).

    Any output path that cannot be written (a directory, a parent that is a file, no permission, a full disk) is
    one line naming the path: every command writes its files through here.
    """
    path = Path(path)
    if path.is_dir():
        raise FileProblem(f"{path}: is a directory; expected a file path to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise FileProblem(f"{path}: cannot write it, a part of its directory path is a file") from None
    except OSError as exc:
        raise FileProblem(f"{path}: cannot create its directory ({exc.strerror or exc})") from None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise FileProblem(f"{path}: cannot write it ({exc.strerror or exc})") from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # a read-only file system refuses even this; the error above names the path
            pass
    try:  # make the rename itself durable
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass



def dumps_json(data: Any) -> str:
    """Stable JSON text (sorted keys, unicode kept, NaN refused)."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"



def write_results(path: str | os.PathLike[str], results: dict[str, Any]) -> None:
    """Atomically write a results JSON."""
    atomic_write_text(path, dumps_json({"format": RESULTS_FORMAT, **results}))



def write_samples(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]]) -> None:
    """Atomically write a samples JSONL (one JSON object per record)."""
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n" for r in rows)
    atomic_write_text(path, text)



def git_revision(start: str | os.PathLike[str] | None = None) -> str | None:
    """``git rev-parse HEAD`` of the checkout holding this package (None when unavailable)."""
    where = Path(start) if start else Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    rev = out.stdout.strip()
    return rev if out.returncode == 0 and len(rev) == 40 else None



def task_dirs(run_dir: str | os.PathLike[str]) -> list[Path]:
    """The task directories of a run: ``run_dir`` itself if it holds results, else its sub-directories."""
    run_dir = Path(run_dir)
    if run_dir.is_file() and run_dir.name == RESULTS_NAME:
        return [run_dir.parent]
    if (run_dir / RESULTS_NAME).is_file():
        return [run_dir]
    found = sorted(p.parent for p in run_dir.glob(f"*/{RESULTS_NAME}"))
    if not found:
        raise ResultsError(f"{run_dir}: no {RESULTS_NAME} found (expected a run directory or a task directory)")
    return found



def common_tasks(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> list[tuple[str, Path, Path]]:
    """(task name, A's task directory, B's) for every task two runs both hold, in A's order (none is one line)."""
    ta, tb = ({load_results(d).get("task", {}).get("name") or d.name: d for d in task_dirs(r)} for r in (a, b))
    if not ta.keys() & tb.keys():
        raise ResultsError(f"{a} and {b} share no task (A: {sorted(ta)}, B: {sorted(tb)})")
    return [(name, ta[name], tb[name]) for name in ta if name in tb]


def load_results(task_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Read ``<task_dir>/results.json``: a JSON object (anything else is one line naming the file)."""
    path = Path(task_dir) / RESULTS_NAME if Path(task_dir).is_dir() else Path(task_dir)
    if not path.is_file():
        raise ResultsError(f"{path}: not found")
    try:  # the strict reader (as `leaderboard verify`): NaN, 1e999, huge integers, lone surrogates are refused
        data = loads_json(read_text(path, "results file"), str(path))
    except FileProblem as exc:
        raise ResultsError(str(exc)) from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: expected a JSON object (a results file written by run/evaluate), got "
                           f"{type(data).__name__}")
    return data


def load_sample_rows(task_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read every row of ``<task_dir>/samples.jsonl`` (a malformed line is an error, not skipped)."""
    return list(iter_sample_rows(task_dir))


def iter_sample_rows(task_dir: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The rows of ``<task_dir>/samples.jsonl`` one at a time: JSON objects, a bad line named by its number."""
    path = Path(task_dir) / SAMPLES_NAME
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise ResultsError(f"{path}: not found") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with fh:
        for n, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ResultsError(f"{path}:{n}: not UTF-8 text (a binary or differently encoded file?)") from None
            if not line.strip():
                continue
            try:  # the strict reader, as `leaderboard verify` reads the same file
                row = loads_json(line, f"{path}:{n}")
            except FileProblem as exc:
                raise ResultsError(str(exc)) from None
            if not isinstance(row, dict):
                raise ResultsError(f"{path}:{n}: expected a JSON object, got {type(row).__name__}")
            yield row

