"""Import saved model outputs for judging (``privasis-bench evaluate --predictions FILE``).

inspect_ai logs (``.eval``, or a ``.json`` log) are read as the ``inspect`` format: each sample's raw completion,
by sample id, post-processed with the protocol §2 testee rules (:mod:`privasis_bench.interop.inspect_logs`).
Three JSONL formats are read, detected from the keys of the first record line:

* ``sanitized`` — privasis-bench's own sanitize output (``id``, ``prompt_hash``, ``raw_output``,
  ``output``, ...); ``output`` is already post-processed and taken as is.
* ``lmeval`` — lm-eval's ``--log_samples`` file ``samples_<task>_<ts>.jsonl`` (``doc_id``, ``doc``,
  ``resps``, ``filtered_resps``); the record id is ``doc["id"]``; the raw response is post-processed with the
  protocol §2 testee rules.
* ``reference`` — the reference pipeline's prediction JSONL (``id``, ``model_sanitized_text``). That pipeline
  post-processed the text before writing it and the reference evaluator judges it verbatim, so by default it is
  judged verbatim here too (protocol §2).

``postprocess`` chooses what happens to the text: ``auto`` (the per-format default above), ``none`` (judge the
stored text verbatim; for ``sanitized`` its ``output``) or ``testee`` (apply the protocol's testee post-processing
to the raw text). The choice made is recorded in the report (``postprocess``) and so in ``results.json``.

A record without a prediction is never scored silently: by default (``missing="leave_out"``) it gets no entry, is
listed in ``report.missing`` and is left out of the scores (the results are then marked incomplete); with
``missing="empty"`` (``evaluate --score-missing-as-empty``) it is scored as an empty output and the report says so;
``missing="failed"`` makes it a failed output (``output=None``, ``error`` says why).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from privasis_bench.adapters.base import Usage
from privasis_bench.data.records import Record
from privasis_bench.errors import DataError
from privasis_bench.fsutil import loads_json, read_text
from privasis_bench.interop.inspect_logs import InspectSample, looks_like_inspect_log, read_inspect_log
from privasis_bench.interop.lmeval import messages_prompt_hash, sample_messages
from privasis_bench.pipeline.sanitize import SanitizedOutput
from privasis_bench.protocol.testee import (
    build_sanitize_request,
    postprocess_output,
    read_template,
)
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_ref

log = logging.getLogger(__name__)

PredictionFormat = Literal["sanitized", "lmeval", "reference", "inspect"]
FORMATS: tuple[str, ...] = ("auto", "sanitized", "lmeval", "reference", "inspect")
POSTPROCESS_CHOICES: tuple[str, ...] = ("auto", "none", "testee")
#: What ``postprocess="auto"`` means per format: the text each format holds is raw (testee) or final (none).
DEFAULT_POSTPROCESS: dict[str, str] = {"sanitized": "none", "lmeval": "testee", "reference": "none", "inspect": "testee"}
MISSING_ERROR = "no prediction for this record in the predictions file"
#: What happens to a record the predictions file has no line for (see the module docstring).
MISSING_CHOICES: tuple[str, ...] = ("leave_out", "empty", "failed")
_LMEVAL_KEYS = ("doc_id", "doc", "resps")


@dataclass
class PredictionReport:
    """What importing a predictions file found (shown by the CLI and stored with the results)."""

    path: str
    format: str
    postprocess: str = "auto"  # none | testee once the format is known: how the stored text was turned into the output
    lines: int = 0  # non-blank lines read
    matched: int = 0  # predictions attached to a record of the task
    missing: list[str] = field(default_factory=list)  # record ids with no prediction
    missing_policy: str = "leave_out"  # what was done with them: leave_out | empty | failed
    unknown: list[str] = field(default_factory=list)  # prediction ids that are not records of the task
    excluded: list[str] = field(default_factory=list)  # predictions for records the protocol never scores
    excluded_reasons: dict[str, str] = field(default_factory=dict)  # id -> why it is excluded
    failed: int = 0  # predictions that are failures in the file itself (error / null output)
    empty: int = 0  # predictions whose post-processed output is empty
    prompt_mismatch: list[str] = field(default_factory=list)  # outputs generated from another prompt than ours
    null_as_empty: int = 0  # lm-eval answers with no content read as "" (--preset paper)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": file_ref(self.path),
            "format": self.format,
            "postprocess": self.postprocess,
            "lines": self.lines,
            "matched": self.matched,
            "missing": len(self.missing),
            "missing_ids": self.missing[:50],
            "missing_policy": self.missing_policy,
            "unknown": len(self.unknown),
            "unknown_ids": self.unknown[:50],
            "excluded": len(self.excluded),
            "excluded_ids": self.excluded[:50],
            "failed": self.failed,
            "empty": self.empty,
            "prompt_mismatch": len(self.prompt_mismatch),
            **({"null_as_empty": self.null_as_empty} if self.null_as_empty else {}),
        }

    def warnings(self) -> list[str]:
        """Human-readable notes about anything a user should know before trusting the scores."""
        notes = []
        if self.missing:
            done = {"leave_out": "left out of the scores", "empty": "scored as empty outputs (--score-missing-as-empty)",
                    "failed": "scored as failed outputs"}[self.missing_policy]
            notes.append(f"{len(self.missing)} record(s) have no prediction in {self.path}; they are {done}")
        if self.unknown:
            notes.append(f"{len(self.unknown)} prediction id(s) in {self.path} are not records of the task and were ignored "
                         f"(e.g. {', '.join(self.unknown[:3])})")
        if self.excluded:
            reasons = sorted(set(self.excluded_reasons.get(i, "excluded") for i in self.excluded))
            notes.append(f"{len(self.excluded)} prediction(s) in {self.path} are for records the protocol excludes from "
                         f"scoring ({', '.join(r.replace('_', ' ') for r in reasons)}: such records are never judged "
                         f"or counted), e.g. {', '.join(self.excluded[:3])}")
        if self.null_as_empty:
            notes.append(f"{self.null_as_empty} lm-eval answer(s) in {self.path} hold no content; under the preset they "
                         "are the empty output \"\" the paper's client reads, and are judged")
        if self.prompt_mismatch:
            notes.append(f"{len(self.prompt_mismatch)} prediction(s) were generated from a different prompt than this "
                         f"task builds (other template or instruction variant?), e.g. {self.prompt_mismatch[0]}")
        return notes


class Predictions(dict):
    """``record id -> SanitizedOutput`` for every record passed in, plus the import report."""

    def __init__(self, items: dict[str, SanitizedOutput], report: PredictionReport):
        super().__init__(items)
        self.report = report


def detect_format(first: dict[str, Any]) -> PredictionFormat:
    """Which format a record line belongs to, from its keys."""
    if all(k in first for k in _LMEVAL_KEYS):
        return "lmeval"
    if "model_sanitized_text" in first and "id" in first:
        return "reference"
    if "id" in first and "prompt_hash" in first and ("output" in first or "raw_output" in first):
        return "sanitized"
    raise ValueError(
        "unrecognized prediction format (keys: " + ", ".join(sorted(first)[:12]) + "); expected privasis-bench "
        "sanitize output (id, prompt_hash, output), lm-eval samples (doc_id, doc, resps) or reference "
        "predictions (id, model_sanitized_text)"
    )


def _iter_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    text = read_text(path, "predictions file")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item = loads_json(line, f"{path}:{number}")
        if not isinstance(item, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, got {type(item).__name__}")
        yield number, item


def _lmeval_model_name(path: Path) -> str:
    """``lm-eval:<backend>:<model>`` from the results file written next to the samples file, if any."""
    stamp = path.stem.rsplit("_", 1)[-1]
    for results in sorted(path.parent.glob(f"results_{stamp}*.json")):
        try:
            config = json.loads(results.read_text(encoding="utf-8")).get("config", {})
        except (OSError, ValueError):
            continue
        backend = str(config.get("model") or "unknown")
        args = config.get("model_args")
        name = None
        if isinstance(args, dict):
            name = args.get("model") or args.get("pretrained")
        elif isinstance(args, str):
            pairs = dict(p.split("=", 1) for p in args.split(",") if "=" in p)
            name = pairs.get("model") or pairs.get("pretrained")
        return f"lm-eval:{backend}:{name}" if name else f"lm-eval:{backend}"
    return f"lm-eval:{path.parent.name}"


def _clean(raw: str, cue: str | None) -> str:
    """``raw`` post-processed with the testee rules when a cue is given, else verbatim."""
    return raw if cue is None else postprocess_output(raw, cue)


def _from_lmeval(path: Path, number: int, item: dict[str, Any], cue: str | None, model: str,
                 null_as_empty: bool = False) -> tuple[str, SanitizedOutput, str | None]:
    doc = item.get("doc")
    if not isinstance(doc, dict) or doc.get("id") in (None, ""):
        raise DataError(f"{path}:{number}: lm-eval sample has no doc.id (was it produced by the privasis lm-eval tasks?)")
    record_id = str(doc["id"])
    raw = _first_response(item)
    if raw is _BAD:
        raise DataError(f"{path}:{number}: record {record_id}: cannot read the response from resps/filtered_resps")
    messages = sample_messages(item)
    sent_hash = messages_prompt_hash(messages) if messages else ""
    if _no_content(raw) and null_as_empty:
        out = SanitizedOutput(id=record_id, prompt_hash=sent_hash, raw_output="", output="", model=model)
    elif _no_content(raw):
        out = SanitizedOutput(id=record_id, prompt_hash=sent_hash, raw_output=None, output=None,
                              error="lm-eval recorded no content for this request", model=model)
    else:
        out = SanitizedOutput(id=record_id, prompt_hash=sent_hash, raw_output=raw, output=_clean(raw, cue), model=model)
    return record_id, out, doc.get("prompt_hash")


_BAD = object()


def _no_content(raw: Any) -> bool:
    """An lm-eval answer with no content: null, or lm-eval's configured placeholder for it."""
    placeholder = os.environ.get("LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER", "")
    return raw is None or bool(placeholder and raw == placeholder)


def _first_response(item: dict[str, Any]) -> Any:
    """The raw response string of a sample (``resps[0][0]``, else ``filtered_resps[0]``); None if null."""
    for key in ("resps", "filtered_resps"):
        responses = item.get(key)
        if isinstance(responses, list) and responses:
            first = responses[0]
            if isinstance(first, list) and first:
                first = first[0]
            if first is None or isinstance(first, str):
                return first
    return _BAD


def _from_reference(path: Path, number: int, item: dict[str, Any], cue: str | None, model: str) -> tuple[str, SanitizedOutput]:
    record_id = item.get("id")
    if record_id in (None, ""):
        raise DataError(f"{path}:{number}: missing `id`")
    text = item.get("model_sanitized_text")
    if text is not None and not isinstance(text, str):
        raise DataError(f"{path}:{number}: record {record_id}: `model_sanitized_text` must be a string or null")
    if text is None:
        out = SanitizedOutput(id=str(record_id), prompt_hash="", raw_output=None, output=None,
                              error="the predictions file holds null for this record", model=model)
    else:
        out = SanitizedOutput(id=str(record_id), prompt_hash="", raw_output=text, output=_clean(text, cue), model=model)
    return str(record_id), out


def _from_inspect(sample: InspectSample, cue: str | None, model: str) -> tuple[str, SanitizedOutput]:
    sent_hash = messages_prompt_hash(sample.messages) if sample.messages else ""
    if sample.raw is None:
        return sample.id, SanitizedOutput(id=sample.id, prompt_hash=sent_hash, raw_output=None, output=None,
                                          error=f"inspect: {sample.error}", model=model)
    return sample.id, SanitizedOutput(id=sample.id, prompt_hash=sent_hash, raw_output=sample.raw, output=_clean(sample.raw, cue),
                                      model=model)


def _from_sanitized(path: Path, number: int, item: dict[str, Any], cue: str | None) -> tuple[str, SanitizedOutput]:
    try:
        out = SanitizedOutput.from_dict(item)
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}:{number}: not a privasis-bench sanitize line ({exc!r})") from None
    if out.output is not None and not isinstance(out.output, str):
        raise DataError(f"{path}:{number}: record {out.id}: `output` must be a string or null")
    if cue is not None and out.output is not None:  # --predictions-postprocess testee: clean the raw answer again
        if not isinstance(out.raw_output, str):
            raise DataError(f"{path}:{number}: record {out.id}: `raw_output` must be a string to post-process it")
        out.output = postprocess_output(out.raw_output, cue)
    if out.output is None and out.error is None:
        out.error = "the predictions file holds no output for this record"
    return out.id, out


def load_predictions(
    path: str | os.PathLike[str],
    records: Sequence[Record],
    *,
    format: str = "auto",
    task: TaskConfig | None = None,
    answer_cue: str | None = None,
    instruction: str | None = None,
    strict_ids: bool = False,
    model: str | None = None,
    excluded: dict[str, str] | None = None,
    postprocess: str = "auto",
    missing: str = "leave_out",
    null_as_empty: bool = False,
) -> Predictions:
    """Read a predictions file into ``record id -> SanitizedOutput`` for every record in ``records``.

    ``task`` supplies the answer cue for post-processing (or pass ``answer_cue``) and, for lm-eval
    files, the expected prompts (``instruction`` variant, default the task's) to flag mismatches.
    Malformed lines and duplicate ids raise :class:`DataError` naming the file and line. Ids that are
    not records of the task are ignored with a warning (or raise with ``strict_ids``). Records with
    no prediction are returned as failed outputs and listed in ``report.missing``. ``excluded`` maps the ids
    of records the protocol never scores to the reason; their predictions are reported as such, not as unknown.
    ``postprocess`` (auto, none, testee) says whether the stored text is judged verbatim or cleaned first.
    ``missing`` (leave_out, empty, failed) says what becomes of a record the file has no prediction for.
    ``null_as_empty``: an lm-eval sample whose answer is null (no content) is the empty output ``""`` the paper's
    client reads (``evaluate --preset paper``), not a failed output; counted in ``report.null_as_empty``.
    """
    path = Path(path)
    if missing not in MISSING_CHOICES:
        raise DataError(f"unknown handling of missing predictions {missing!r} (expected one of {', '.join(MISSING_CHOICES)})")
    if format not in FORMATS:
        raise DataError(f"unknown predictions format {format!r} (expected one of {', '.join(FORMATS)})")
    if postprocess not in POSTPROCESS_CHOICES:
        raise DataError(f"unknown predictions post-processing {postprocess!r} (expected one of "
                        f"{', '.join(POSTPROCESS_CHOICES)})")
    if path.is_dir():
        raise DataError(f"{path} is a directory; pass the predictions file itself (e.g. samples_<task>_<time>.jsonl)")
    cue = answer_cue if answer_cue is not None else (task.prompt.answer_cue if task is not None else None)
    by_id = {r.id: r for r in records}
    report = PredictionReport(path=str(path), format=format, missing_policy=missing)
    found: dict[str, SanitizedOutput] = {}
    first_line: dict[str, int] = {}
    fmt: str | None = None if format == "auto" else format
    lm_model = model
    template: str | None = None
    lines: Any
    if format == "inspect" or (format == "auto" and looks_like_inspect_log(path)):
        inspect_model, lines = read_inspect_log(path)
        fmt = report.format = "inspect"
        lm_model = model or inspect_model
    else:
        lines = _iter_lines(path)
    for number, item in lines:
        report.lines += 1
        if fmt is None:
            try:
                fmt = detect_format(item)
            except ValueError as exc:
                raise DataError(f"{path}:{number}: {exc}") from None
            report.format = fmt
        if report.postprocess == "auto":
            report.postprocess = DEFAULT_POSTPROCESS[fmt] if postprocess == "auto" else postprocess
            if report.postprocess == "testee" and cue is None:
                raise DataError(f"{path}: {fmt} predictions are post-processed with the task's answer cue; pass the task")
        clean_cue = cue if report.postprocess == "testee" else None
        doc_hash = None
        if fmt == "inspect":
            record_id, out = _from_inspect(item, clean_cue, lm_model or f"inspect:{path.name}")
        elif fmt == "lmeval":
            if not all(k in item for k in _LMEVAL_KEYS):
                raise DataError(f"{path}:{number}: not an lm-eval sample line (needs doc_id, doc, resps)")
            if lm_model is None:
                lm_model = _lmeval_model_name(path)
            record_id, out, doc_hash = _from_lmeval(path, number, item, clean_cue, lm_model, null_as_empty)
            report.null_as_empty += out.error is None and out.raw_output == "" and _no_content(_first_response(item))
        elif fmt == "reference":
            if "model_sanitized_text" not in item:
                raise DataError(f"{path}:{number}: not a reference prediction line (needs id, model_sanitized_text)")
            record_id, out = _from_reference(path, number, item, clean_cue, model or f"predictions:{path.name}")
        else:
            record_id, out = _from_sanitized(path, number, item, clean_cue)
            if model:
                out.model = model
        if record_id in first_line:
            raise DataError(f"{path}:{number}: duplicate prediction for record {record_id} (first on line {first_line[record_id]})")
        first_line[record_id] = number
        if record_id not in by_id:
            if excluded and record_id in excluded:
                report.excluded.append(record_id)
                report.excluded_reasons[record_id] = excluded[record_id]
            else:
                report.unknown.append(record_id)
            continue
        if fmt in ("lmeval", "sanitized", "inspect") and out.prompt_hash and task is not None:
            if template is None:
                template = read_template(task)
            expected = build_sanitize_request(by_id[record_id], task, instruction=instruction, template=template).prompt_hash()
            if out.prompt_hash != expected:
                report.prompt_mismatch.append(record_id)
        elif fmt == "lmeval" and doc_hash and out.prompt_hash and doc_hash != out.prompt_hash:
            report.prompt_mismatch.append(record_id)
        found[record_id] = out
    if strict_ids and report.unknown:
        raise DataError(f"{path}: {len(report.unknown)} prediction id(s) are not records of the task "
                        f"(e.g. {', '.join(report.unknown[:3])})")
    if report.lines and not found and report.unknown and not report.excluded:
        raise DataError(f"{path}: none of its {report.lines} prediction ids belong to the task's records "
                        f"(e.g. {report.unknown[0]}); wrong task or wrong file?")
    if report.lines == 0:
        raise DataError(f"{path}: the predictions file is empty")
    items: dict[str, SanitizedOutput] = {}
    for record in records:
        out = found.get(record.id)
        if out is None:
            if not record.excluded:  # a record that is never scored needs no prediction
                report.missing.append(record.id)
            if missing == "leave_out" and not record.excluded:  # an excluded record is never judged either way
                continue
            empty = missing == "empty"
            out = SanitizedOutput(id=record.id, prompt_hash="", raw_output="" if empty else None, output="" if empty else None,
                                  error=None if empty else MISSING_ERROR, usage=Usage(),
                                  model=lm_model or model or f"predictions:{path.name}")
        else:
            report.matched += 1
            report.failed += out.output is None
            report.empty += out.output == ""
        items[record.id] = out
    for note in report.warnings():
        log.warning(note)
    return Predictions(items, report)
