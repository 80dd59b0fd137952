"""The sanitization stage (protocol §2): build the request, run the model, post-process, persist.

``run_sanitize`` writes one JSON line per record and is resumable: an existing output file is read
(a line truncated by a crash is ignored), successful lines are kept, failed or missing records are
run again, every new result is appended (flush + fsync) the moment it lands, and at the end the file
is rewritten atomically in record order. A sidecar ``<name>.meta.json`` records the run settings so
that a re-run with a different model, task, instruction variant or generation settings refuses to
mix its outputs into the same file."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.engine.executor import Engine
from privasis_bench.errors import PrivasisError
from privasis_bench.data.records import Record
from privasis_bench.protocol.testee import build_sanitize_request, postprocess_output, read_template
from privasis_bench.results.files import atomic_write_text
from privasis_bench.tasks.config import TaskConfig


META_SUFFIX = ".meta.json"



OUTPUT_FORMAT = "privasis-bench/sanitized/1"



class OutputMismatchError(PrivasisError):
    """An existing output file was produced with different settings than this run."""



@dataclass
class SanitizedOutput:
    """One record's result of the sanitization stage (``output`` is None exactly when the call failed)."""

    id: str
    prompt_hash: str
    raw_output: str | None
    output: str | None
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    cached: bool = False
    model: str = ""
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.error is None and self.output is not None

    @classmethod
    def from_result(cls, record_id: str, request: ChatRequest, result: ChatResult, *, answer_cue: str, model: str) -> "SanitizedOutput":
        """Wrap an engine result, post-processing successful outputs."""
        ok = result.ok
        return cls(
            id=record_id,
            prompt_hash=request.prompt_hash(),
            raw_output=result.text if ok else None,
            output=postprocess_output(result.text, answer_cue) if ok and result.text is not None else None,
            finish_reason=result.finish_reason,
            usage=result.usage,
            error=None if ok else (result.error or "the call failed without a message"),
            cached=result.cached,
            model=model,
            attempts=result.attempts,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "prompt_hash": self.prompt_hash,
            "raw_output": self.raw_output,
            "output": self.output,
            "finish_reason": self.finish_reason,
            "usage": self.usage.to_dict(),
            "error": self.error,
            "cached": self.cached,
            "model": self.model,
            "attempts": self.attempts,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SanitizedOutput":
        usage = data.get("usage") or {}
        return cls(
            id=str(data["id"]),
            prompt_hash=str(data["prompt_hash"]),
            raw_output=data.get("raw_output"),
            output=data.get("output"),
            finish_reason=data.get("finish_reason"),
            usage=Usage(int(usage.get("prompt_tokens", 0) or 0), int(usage.get("completion_tokens", 0) or 0)),
            error=data.get("error"),
            cached=bool(data.get("cached", False)),
            model=str(data.get("model", "")),
            attempts=int(data.get("attempts", 1) or 1),
        )



def read_outputs(path: str | os.PathLike[str]) -> dict[str, SanitizedOutput]:
    """Read a sanitized JSONL (last line per id wins; unreadable or truncated lines are skipped)."""
    out: dict[str, SanitizedOutput] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    item = SanitizedOutput.from_dict(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a crash: that record is simply run again
                out[item.id] = item
    except FileNotFoundError:
        pass
    return out



def meta_path(out_path: str | os.PathLike[str]) -> Path:
    """The sidecar file describing how ``out_path`` was produced."""
    p = Path(out_path)
    return p.with_name(p.name + META_SUFFIX)



def run_settings(task: TaskConfig, engine: Engine, *, instruction: str, max_tokens: int, temperature: float, template: str) -> dict[str, Any]:
    """The settings that must match for two runs to share one output file."""
    return {
        "format": OUTPUT_FORMAT,
        "task": task.task,
        "task_version": task.version,
        "model": engine.spec_key,
        "rankable": bool(getattr(engine.adapter, "rankable", True)),  # False: the model reads gold labels
        "instruction": instruction,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "answer_cue": task.prompt.answer_cue,
        "template_sha256": hashlib.sha256(template.encode("utf-8")).hexdigest(),
    }



def run_sanitize(
    records: Sequence[Record],
    task: TaskConfig,
    engine: Engine,
    out_path: str | os.PathLike[str],
    *,
    instruction: str | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    overwrite: bool = False,
) -> list[SanitizedOutput]:
    """Run the model over ``records`` and write ``out_path`` (resumable; see the module docstring).

    Returns the outputs in record order. Lines of ids outside ``records`` (e.g. from an earlier run
    with a larger ``--limit``) are kept at the end of the file.
    """
    out_path = Path(out_path)
    variant = instruction or task.prompt.instruction
    max_tokens = int(max_tokens if max_tokens is not None else task.generation.max_tokens)
    temperature = float(temperature if temperature is not None else task.generation.temperature)
    template = read_template(task)
    settings = run_settings(task, engine, instruction=variant, max_tokens=max_tokens, temperature=temperature, template=template)
    requests = [
        build_sanitize_request(r, task, instruction=variant, max_tokens=max_tokens, temperature=temperature, template=template)
        for r in records
    ]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if overwrite:
        for p in (out_path, meta_path(out_path)):
            p.unlink(missing_ok=True)
    existing = read_outputs(out_path)
    _check_compatible(out_path, settings, existing)

    done: dict[str, SanitizedOutput] = {}
    for record, request in zip(records, requests):
        prev = existing.get(record.id)
        if prev is not None and prev.ok and prev.prompt_hash == request.prompt_hash() and _acceptable(engine, prev):
            done[record.id] = prev
    todo = [i for i, r in enumerate(records) if r.id not in done]
    current_ids = {r.id for r in records}
    extras = [o for i, o in existing.items() if i not in current_ids]

    # Start from a clean file (drops a truncated tail and stale lines), then append as results land.
    _write_meta(out_path, settings, None)
    _atomic_write_lines(out_path, [*(done[r.id] for r in records if r.id in done), *extras])
    with open(out_path, "a", encoding="utf-8") as fh:

        def on_result(j: int, result: ChatResult) -> None:
            i = todo[j]
            item = SanitizedOutput.from_result(
                records[i].id, requests[i], result, answer_cue=task.prompt.answer_cue, model=engine.spec_key
            )
            done[item.id] = item
            fh.write(json.dumps(item.to_dict(), ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

        if todo:
            engine.run([requests[i] for i in todo], desc=f"sanitize {task.task}", on_result=on_result)

    final = [done[r.id] for r in records]
    _atomic_write_lines(out_path, [*final, *extras])
    _write_meta(out_path, settings, summarize(final))
    return final



def _acceptable(engine: Engine, prev: SanitizedOutput) -> bool:
    """False for an earlier empty or cut-off output that the engine's answer policy now asks again."""
    return engine.answers.problem(ChatResult(text=prev.raw_output, finish_reason=prev.finish_reason)) is None



def summarize(outputs: Sequence[SanitizedOutput]) -> dict[str, int]:
    """Counts of a finished stage: records, failed, empty and cut-off outputs, served from cache, tokens."""
    usage = Usage()
    for o in outputs:
        if not o.cached:
            usage.add(o.usage)
    return {
        "records": len(outputs),
        "ok": sum(o.ok for o in outputs),
        "failed": sum(not o.ok for o in outputs),
        "empty": sum(o.ok and o.output == "" for o in outputs),
        "truncated": sum(o.ok and o.finish_reason == "length" for o in outputs),
        "cached": sum(o.cached for o in outputs),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
    }



def _check_compatible(out_path: Path, settings: dict[str, Any], existing: dict[str, SanitizedOutput]) -> None:
    hint = "use a different --output directory or pass --overwrite"
    meta_file = meta_path(out_path)
    if meta_file.exists() and out_path.exists():  # a sidecar without outputs guards nothing
        try:
            previous = json.loads(meta_file.read_text(encoding="utf-8")).get("settings", {})
        except (OSError, ValueError):
            previous = None
        if previous is None:
            raise OutputMismatchError(f"{meta_file} is unreadable; {hint}")
        diffs = [k for k in settings if previous.get(k) != settings[k]]
        if diffs:
            detail = "; ".join(f"{k}: {previous.get(k)!r} there, {settings[k]!r} now" for k in diffs)
            raise OutputMismatchError(f"{out_path} was produced with different settings ({detail}); {hint}")
    models = {o.model for o in existing.values()} - {settings["model"]}
    if models:
        raise OutputMismatchError(f"{out_path} holds outputs of another model ({sorted(models)[0]}); {hint}")



def _write_meta(out_path: Path, settings: dict[str, Any], counts: dict[str, int] | None) -> None:
    body = {"settings": settings, "counts": counts, "complete": counts is not None and counts["failed"] == 0,
            "rankable": settings.get("rankable", True)}
    atomic_write_text(meta_path(out_path), json.dumps(body, indent=2, sort_keys=True) + "\n")



def _atomic_write_lines(path: Path, items: Sequence[SanitizedOutput]) -> None:
    atomic_write_text(path, "".join(json.dumps(o.to_dict(), ensure_ascii=False) + "\n" for o in items))
