"""The sanitization stage (protocol §2): build the request, run the model, post-process, persist.

An :class:`OutputJournal` keeps one JSON line per record and makes the stage resumable: an existing output
file is read (a line truncated by a crash is ignored), successful lines are kept, failed or missing records
are run again, every new result is appended (and flushed) the moment it lands, and at the end the file
is replaced atomically by its lines in record order. A sidecar ``<name>.meta.json`` records the run settings so
that a re-run with a different model, task, instruction variant or generation settings refuses to
mix its outputs into the same file."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage, is_cut_failure
from privasis_bench.data.records import Record
from privasis_bench.engine.executor import Engine
from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import AppendLog
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
    spans: list[tuple[int, int]] | None = None  # masked spans of the input the system reported (span scorers)
    replacements: list[str] | None = None  # what the system wrote in place of each span, when it says

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
            spans=list(result.spans) if ok and result.spans is not None else None,
            replacements=list(result.replacements) if ok and result.replacements is not None else None,
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
            **({"spans": [list(s) for s in self.spans]} if self.spans is not None else {}),
            **({"replacements": list(self.replacements)} if self.replacements is not None else {}),
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
            spans=[(int(s), int(e)) for s, e in data["spans"]] if data.get("spans") is not None else None,
            replacements=[str(r) for r in data["replacements"]] if data.get("replacements") is not None else None,
        )



def read_outputs(path: str | os.PathLike[str]) -> dict[str, SanitizedOutput]:
    """Read a sanitized JSONL (last line per id wins; unreadable or truncated lines are skipped)."""
    out: dict[str, SanitizedOutput] = {}
    fix = "move it away or delete it to start this task's outputs again (`sanitize` also takes --overwrite)"
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError:
                    raise OutputMismatchError(f"{path}:{number}: not UTF-8 text, so not an outputs file this harness "
                                              f"wrote (corrupt?); {fix}") from None
                if not line:
                    continue
                try:
                    item = SanitizedOutput.from_dict(json.loads(line))
                except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                    continue  # a line cut short by a crash: that record is simply run again
                out[item.id] = item
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise OutputMismatchError(f"{path}: is a directory where the outputs file belongs; {fix}") from None
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



class OutputJournal:
    """The output file of one model on one task: earlier outputs for resuming, new ones kept the moment they land.

    On opening, the file's settings are checked against this run's (a mismatch refuses to mix outputs) and a line
    cut short by a crash is dropped. Each new output is appended and flushed as it lands (fsynced in groups: see
    :class:`~privasis_bench.fsutil.AppendLog`); finished records are also written in record order to a temporary
    file that replaces the journal in :meth:`finish`, followed by the lines of ids this run did not touch (e.g.
    from an earlier run with a larger ``--limit``).
    """

    def __init__(self, task: TaskConfig, engine: Engine, out_path: str | os.PathLike[str], *, instruction: str | None = None,
                 max_tokens: int | None = None, temperature: float | None = None, overwrite: bool = False) -> None:
        self.path, self.task, self.engine = Path(out_path), task, engine
        self.instruction = instruction or task.prompt.instruction
        self.max_tokens = int(max_tokens if max_tokens is not None else task.generation.max_tokens)
        self.temperature = float(temperature if temperature is not None else task.generation.temperature)
        self.template = read_template(task)
        self.settings = run_settings(task, engine, instruction=self.instruction, max_tokens=self.max_tokens,
                                     temperature=self.temperature, template=self.template)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if overwrite:
            for p in (self.path, meta_path(self.path)):
                p.unlink(missing_ok=True)
        self.earlier = read_outputs(self.path)
        _check_compatible(self.path, self.settings, self.earlier)
        _write_meta(self.path, self.settings, None)
        self._journal = AppendLog(self.path)
        self._ordered_path = self.path.with_name(f".{self.path.name}.{os.getpid()}.ordered.tmp")
        self._ordered = open(self._ordered_path, "w", encoding="utf-8")
        self.counts = Counter({k: 0 for k in SUMMARY_KEYS})

    def request(self, record: Record) -> ChatRequest:
        """The sanitization request for ``record`` (protocol §2)."""
        return build_sanitize_request(record, self.task, instruction=self.instruction, max_tokens=self.max_tokens,
                                      temperature=self.temperature, template=self.template)

    def reusable(self, record: Record, request: ChatRequest) -> SanitizedOutput | None:
        """An earlier successful output for this very request that the answer policy still accepts, else None."""
        prev = self.earlier.pop(record.id, None)
        if prev is not None and prev.ok and prev.prompt_hash == request.prompt_hash() and _acceptable(self.engine, prev):
            return prev
        return None

    def land(self, record: Record, request: ChatRequest, result: ChatResult) -> SanitizedOutput:
        """Turn the model's result into an output and append it to the journal at once."""
        item = SanitizedOutput.from_result(record.id, request, result, answer_cue=self.task.prompt.answer_cue,
                                           model=self.engine.spec_key)
        self._journal.write(json.dumps(item.to_dict(), ensure_ascii=False) + "\n")
        return item

    def keep(self, item: SanitizedOutput) -> None:
        """Write a finished record's output in record order (called in record order)."""
        self._ordered.write(json.dumps(item.to_dict(), ensure_ascii=False) + "\n")
        _count(self.counts, item)

    def finish(self) -> dict[str, int]:
        """Replace the journal by the ordered file (plus untouched earlier lines); returns the stage's counts."""
        for item in self.earlier.values():
            self._ordered.write(json.dumps(item.to_dict(), ensure_ascii=False) + "\n")
        self._ordered.flush()
        os.fsync(self._ordered.fileno())
        self._journal.close()
        self._ordered.close()
        os.replace(self._ordered_path, self.path)
        counts = dict(self.counts)
        _write_meta(self.path, self.settings, counts)
        return counts

    def close(self) -> None:
        """Close the files; an unfinished ordered file is removed (the journal keeps every output)."""
        self._journal.close()
        if not self._ordered.closed:
            self._ordered.close()
        self._ordered_path.unlink(missing_ok=True)



SUMMARY_KEYS = ("records", "ok", "failed", "failed_cut", "empty", "truncated", "cached", "prompt_tokens",
                "completion_tokens")


def _count(counts: Counter, o: SanitizedOutput) -> None:
    counts["records"] += 1
    counts["ok"] += o.ok
    counts["failed"] += not o.ok
    counts["failed_cut"] += not o.ok and is_cut_failure(o.error)  # failed because every answer was cut
    counts["empty"] += o.ok and o.output == ""
    counts["truncated"] += o.ok and o.finish_reason == "length"
    counts["cached"] += o.cached
    if not o.cached:
        counts["prompt_tokens"] += o.usage.prompt_tokens
        counts["completion_tokens"] += o.usage.completion_tokens



def _acceptable(engine: Engine, prev: SanitizedOutput) -> bool:
    """False for an earlier empty or cut-off output that the engine's answer policy now asks again."""
    return engine.answers.problem(ChatResult(text=prev.raw_output, finish_reason=prev.finish_reason)) is None



def summarize(outputs: Sequence[SanitizedOutput]) -> dict[str, int]:
    """Counts of a finished stage: records, failed, empty and cut-off outputs, served from cache, tokens."""
    counts = Counter({k: 0 for k in SUMMARY_KEYS})
    for o in outputs:
        _count(counts, o)
    return dict(counts)



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
