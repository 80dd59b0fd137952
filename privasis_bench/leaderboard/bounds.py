"""Bounded reading of submitted files: size, encoding, JSON nesting and per-field text limits, one line per problem.

A submission is untrusted input to CI. Every file is read with a byte limit, decoded as UTF-8 (a binary file is one
problem line, never a crash), parsed with a nesting limit, and every recorded number that sets how much work
verification does (bootstrap samples, confidence, seed) must equal the shipped task's. Text fields are bounded by the
task's token budgets with a generous margin, so the work per entry is linear in what the task allows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from privasis_bench.fsutil import FileProblem, loads_json
from privasis_bench.tasks.config import TaskConfig

#: Byte limits per file. samples.jsonl is further bounded per line and per text field.
MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_SAMPLES_BYTES = 1024 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024
#: Deepest JSON nesting a submitted file may use (the real files use under 10).
MAX_DEPTH = 32
#: Characters allowed per token of a budget (a token of any tokenizer is far shorter), plus a fixed allowance.
CHARS_PER_TOKEN = 32
TEXT_ALLOWANCE = 4096


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a parsed JSON value (iterative; stops counting past ``limit``)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            if level > limit:
                return level
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_json(text: str, where: str, problems: list[str]) -> Any:
    """``json.loads`` of one untrusted document, or None with one problem line (bad JSON, too deep)."""
    try:  # the project's strict reader: NaN/Infinity, huge integers and lone surrogates are refused too
        data = loads_json(text, where)
    except FileProblem as exc:
        problems.append(f"not valid JSON: {exc}")
        return None
    if depth_of(data) > MAX_DEPTH:
        problems.append(f"{where}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
        return None
    return data


def read_text(path: Path, max_bytes: int, problems: list[str]) -> str | None:
    """The UTF-8 text of ``path``, or None with one problem line (missing, too large, not a file, binary)."""
    try:
        if path.is_symlink():
            problems.append(f"{path}: a symbolic link; a submission holds plain files only")
            return None
        size = path.stat().st_size
        if not path.is_file():
            problems.append(f"{path}: not a regular file")
            return None
        if size > max_bytes:
            problems.append(f"{path}: {size} bytes, over the limit of {max_bytes} for a submitted file")
            return None
        data = path.read_bytes()
    except FileNotFoundError:
        problems.append(f"{path}: missing")
        return None
    except OSError as exc:
        problems.append(f"{path}: cannot be read ({exc.strerror or exc})")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"{path}: not UTF-8 text (byte {exc.start}); a submitted file is JSON text")
        return None


def read_json(path: Path, problems: list[str]) -> Any:
    """One bounded JSON document (see :func:`read_text`, :func:`parse_json`)."""
    text = read_text(path, MAX_JSON_BYTES, problems)
    return None if text is None else parse_json(text, str(path), problems)


def parse_rows(text: str, path: Path, problems: list[str]) -> list[dict[str, Any]] | None:
    """Every line of a samples file's text as a JSON object, or None after the first bad line (one problem line)."""
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_BYTES:
            problems.append(f"{path}:{n}: line of {len(line)} characters, over the limit of {MAX_LINE_BYTES}")
            return None
        row = parse_json(line, f"{path}:{n}", problems)
        if row is None:
            return None
        if not isinstance(row, dict):
            problems.append(f"{path}:{n}: a samples line must be a JSON object, not {type(row).__name__}")
            return None
        rows.append(row)
    return rows


def text_limits(task: TaskConfig) -> tuple[int, int]:
    """(longest model output, longest judge answer) in characters that ``task``'s token budgets allow."""
    model = task.generation.max_tokens * CHARS_PER_TOKEN + TEXT_ALLOWANCE
    budgets = (task.judge.guess_max_tokens, task.judge.compare_max_tokens) if task.judge is not None else (0,)
    judge = max(budgets) * CHARS_PER_TOKEN + TEXT_ALLOWANCE  # a task without a judge (span scorers): no answers
    return model, judge


_JUDGE_FIELDS = ("guess", "guess_raw", "original_guess", "original_guess_raw", "compare_answer", "compare_answer_raw",
                 "inclusion_answer", "inclusion_answer_raw")


def text_problems(rows: list[Mapping[str, Any]], task: TaskConfig) -> list[str]:
    """Every model output or judge answer longer than the task's budget allows (with the margin above)."""
    model_max, judge_max = text_limits(task)
    problems = []
    for row in rows:
        rid = str(row.get("record_id", row.get("id")))[:80]  # Privasis rows name a record, TAB rows a document
        items = [*(row.get("targets") or []), *(row.get("keep") or [])] if isinstance(row.get("targets") or [], list) \
            and isinstance(row.get("keep") or [], list) else []
        allowed = 3 * model_max + len(items) * (len(_JUDGE_FIELDS) * judge_max + TEXT_ALLOWANCE) + 16 * TEXT_ALLOWANCE
        size = len(json.dumps(row, ensure_ascii=False))
        if size > allowed:
            problems.append(f"record {rid}: its samples line has {size} characters, more than the task's budgets allow "
                            f"({allowed})")
            continue
        for key in ("output", "raw_output", "output_error"):
            value = row.get(key)
            if isinstance(value, str) and len(value) > model_max:
                problems.append(f"record {rid}: {key} has {len(value)} characters, more than the task's output budget "
                                f"of {task.generation.max_tokens} tokens allows ({model_max})")
        for kind in ("targets", "keep"):
            items = row.get(kind)
            for item in items if isinstance(items, list) else []:
                for key in _JUDGE_FIELDS:
                    value = item.get(key) if isinstance(item, dict) else None
                    if isinstance(value, str) and len(value) > judge_max:
                        problems.append(f"record {rid} {kind}:{str(item.get('name'))[:60]}: {key} has {len(value)} "
                                        f"characters, more than the judge's answer budget allows ({judge_max})")
    return problems


def bootstrap_problems(results: Mapping[str, Any], task: TaskConfig) -> list[str]:
    """The recorded bootstrap settings must be the task's own (they set the verifier's work and the intervals)."""
    boot = ((results.get("metrics") or {}).get("bootstrap") or {}) if isinstance(results.get("metrics"), dict) else {}
    want = {"samples": task.metrics.bootstrap_samples, "confidence": task.metrics.confidence,
            "seed": task.metrics.bootstrap_seed}
    return [f"metrics.bootstrap.{key} is {boot.get(key)!r}, the task {task.task!r} sets {value!r} (re-run or rescore "
            f"with the task's bootstrap settings)" for key, value in want.items() if boot.get(key) != value]
