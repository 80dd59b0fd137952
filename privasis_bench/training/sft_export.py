"""Export supervised fine-tuning data: one chat example per corpus row (instruction, input, the row's own rewrite).

Each line of the output is ``{"messages": [user, assistant], "id", "instruction", "source"}``. The user turn
is built by :func:`~privasis_bench.protocol.testee.build_sanitize_request`, the function ``sanitize`` uses, so
training and evaluation prompts are the same bytes; the assistant turn is the row's ``sanitized_record``.

By default this follows the paper (Appendix C): every triple of the corpus, with the final (smoothed)
instruction in the user turn. Which rows are kept, in this order (each drop is counted in the
:class:`ExportReport`):

1. only with ``only_successful`` (``--only-successful``; not described in the paper): rows without keep
   attributes are dropped (they are never scored, protocol §1), and the row's rewrite must be a Full Successful
   Record (protocol §5), by the verdict the row carries (``verdict`` or ``pipeline.verdict``, as
   ``build-corpus`` writes it) or else by the deterministic judge (the ``--judge none`` rules);
2. a row with an empty rewrite is dropped;
3. unless overlap checks are off, no evaluation record may share the row's id, its text or a near-duplicate
   of its text;
4. an id already exported from an earlier source is skipped.

A seeded, id-based draw sends a fraction of the kept rows to a held-out file (stable across re-runs).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from privasis_bench.data.records import Record
from privasis_bench.errors import DataError, PrivasisError
from privasis_bench.protocol.judge import Judge, JudgeInput, JudgeSettings
from privasis_bench.protocol.metrics import is_full_success
from privasis_bench.protocol.testee import build_sanitize_request, read_template
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.results.files import atomic_write_text, dumps_json
from privasis_bench.training.overlap import EvalIndex
from privasis_bench.training.sources import RowSource

INSTRUCTION_MODES = ("base", "smoothed", "mix")
REPORT_SUFFIX = ".export.json"
EXPORT_FORMAT = "privasis-bench/sft/1"


@dataclass(frozen=True)
class ExportSettings:
    """How rows become examples: instruction variant, the success filter, held-out fraction and seed."""

    instruction: str = "smoothed"  # smoothed (the paper) | base | mix (a seeded per-record choice)
    heldout_fraction: float = 0.0
    seed: int = 0
    only_successful: bool = False  # keep only rows whose own rewrite is fully successful (not in the paper)

    def __post_init__(self) -> None:
        if self.instruction not in INSTRUCTION_MODES:
            raise PrivasisError(f"--instruction must be one of {', '.join(INSTRUCTION_MODES)}, not {self.instruction!r}")
        if not 0.0 <= self.heldout_fraction < 1.0:
            raise PrivasisError(f"--heldout must be in [0, 1), not {self.heldout_fraction}")


@dataclass
class ExportReport:
    """What was read, what was dropped and why, and what was written."""

    rows: int = 0
    invalid_rows: int = 0
    no_keep_attributes: int = 0
    verdicts_recorded: int = 0  # verdicts read from the rows
    verdicts_deterministic: int = 0  # computed with the --judge none rules
    not_fully_successful: int = 0
    empty_sanitized: int = 0
    eval_overlap: dict[str, int] = field(default_factory=lambda: {"id": 0, "text": 0, "near_duplicate": 0})
    duplicate_id: int = 0
    train: int = 0
    heldout: int = 0
    instructions: dict[str, int] = field(default_factory=dict)
    eval_records_indexed: int = 0
    overlap_check: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fraction(seed: int, salt: str, record_id: str) -> float:
    digest = hashlib.sha256(f"{seed}:{salt}:{record_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def instruction_variant(mode: str, record_id: str, seed: int) -> str:
    """The instruction variant of one example (``mix``: base or smoothed, 50/50 by a seeded hash of the id)."""
    if mode != "mix":
        return mode
    return "smoothed" if _fraction(seed, "instruction", record_id) < 0.5 else "base"


def is_heldout(record_id: str, fraction: float, seed: int) -> bool:
    """Whether a record goes to the held-out split (a seeded hash of its id, so re-runs agree)."""
    return fraction > 0 and _fraction(seed, "heldout", record_id) < fraction


def recorded_verdict(record: Record) -> RecordVerdict | None:
    """The verdict a row carries about its own rewrite (``verdict`` or ``pipeline.verdict``), if any."""
    value = record.extra.get("verdict")
    pipeline = record.extra.get("pipeline")
    if value is None and pipeline is not None:
        if isinstance(pipeline, str):
            try:
                pipeline = json.loads(pipeline)
            except json.JSONDecodeError:
                raise DataError(f"record {record.id}: field pipeline is not valid JSON") from None
        if isinstance(pipeline, dict):
            value = pipeline.get("verdict")
    if value is None:
        return None
    try:
        data = json.loads(value) if isinstance(value, str) else value
        return RecordVerdict.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"record {record.id}: field verdict cannot be read as a verdict ({exc})") from None


def deterministic_verdicts(records: Sequence[Record]) -> list[RecordVerdict]:
    """Verdicts on each record's own ``sanitized_record`` with the deterministic (``--judge none``) rules."""
    judge = Judge(None, None, JudgeSettings(enabled=False))  # type: ignore[arg-type]  # prompts unused when disabled
    verdicts, _ = judge.judge([JudgeInput(r, r.reference_sanitized) for r in records])
    return verdicts


def sft_example(record: Record, source: RowSource, variant: str, template: str) -> dict[str, Any]:
    """One chat example: the exact ``sanitize`` prompt as the user turn, the row's rewrite as the answer."""
    request = build_sanitize_request(record, source.task, instruction=variant, template=template)
    (role, prompt), = request.messages
    return {
        "messages": [{"role": role, "content": prompt}, {"role": "assistant", "content": record.reference_sanitized.strip()}],
        "id": record.id,
        "instruction": variant,
        "source": source.task.task,
    }


def _successful(records: list[Record], report: ExportReport, only_successful: bool) -> list[Record]:
    """Rows whose own rewrite is a Full Successful Record (recorded verdict first, else deterministic); every row
    when ``only_successful`` is off."""
    if not only_successful:
        return list(records)
    scored = [r for r in records if not r.excluded]
    report.no_keep_attributes += len(records) - len(scored)
    recorded = {r.id: recorded_verdict(r) for r in scored}
    missing = [r for r in scored if recorded[r.id] is None]
    computed = dict(zip((r.id for r in missing), deterministic_verdicts(missing)))
    report.verdicts_recorded += len(scored) - len(missing)
    report.verdicts_deterministic += len(missing)
    kept = [r for r in scored if is_full_success(recorded[r.id] or computed[r.id])]
    report.not_fully_successful += len(scored) - len(kept)
    return kept


def export_sft(
    sources: Sequence[RowSource],
    out_path: str | Path,
    *,
    settings: ExportSettings = ExportSettings(),
    eval_index: EvalIndex | None = None,
    heldout_path: str | Path | None = None,
) -> ExportReport:
    """Write the training (and held-out) JSONL files and a ``<out>.export.json`` report; return the report."""
    report = ExportReport(overlap_check=eval_index is not None, eval_records_indexed=len(eval_index or ()))
    if settings.heldout_fraction > 0 and heldout_path is None:
        raise PrivasisError("a held-out fraction needs a held-out output path")
    train_lines: list[str] = []
    heldout_lines: list[str] = []
    seen: set[str] = set()
    variants: Counter[str] = Counter()
    for source in sources:
        report.rows += len(source.loaded.records) + len(source.loaded.invalid)
        report.invalid_rows += len(source.loaded.invalid)
        template = read_template(source.task)
        for record in _successful(source.loaded.records, report, settings.only_successful):
            if not record.reference_sanitized.strip():
                report.empty_sanitized += 1
                continue
            hit = eval_index.match(record) if eval_index is not None else None
            if hit is not None:
                report.eval_overlap[hit.reason] += 1
                continue
            if record.id in seen:
                report.duplicate_id += 1
                continue
            seen.add(record.id)
            variant = instruction_variant(settings.instruction, record.id, settings.seed)
            line = json.dumps(sft_example(record, source, variant, template), ensure_ascii=False)
            if is_heldout(record.id, settings.heldout_fraction, settings.seed):
                heldout_lines.append(line)
            else:
                train_lines.append(line)
                variants[variant] += 1
    report.train, report.heldout, report.instructions = len(train_lines), len(heldout_lines), dict(variants)
    atomic_write_text(out_path, "".join(line + "\n" for line in train_lines))
    if heldout_path is not None:
        atomic_write_text(heldout_path, "".join(line + "\n" for line in heldout_lines))
    meta = {
        "format": EXPORT_FORMAT,
        "sources": [s.task.task for s in sources],
        "settings": asdict(settings),
        "report": report.to_dict(),
        "sha256": file_sha256(out_path),
        "heldout_file": str(heldout_path) if heldout_path is not None else None,
    }
    atomic_write_text(report_path(out_path), dumps_json(meta))
    return report


def report_path(data_path: str | Path) -> Path:
    """The sidecar report of an exported file."""
    p = Path(data_path)
    return p.with_name(p.name + REPORT_SUFFIX)


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
