"""The judge stage: which judge a run uses, and judging every output with resume from the checkpoint.

``resolve_judge`` turns the task's judge section plus command-line overrides into a :class:`JudgeChoice`;
``judge_outputs`` asks the protocol's :class:`~privasis_bench.protocol.judge.Judge` about every record not
already in ``judged.jsonl`` and appends each finished chunk there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from privasis_bench.adapters.spec import ModelSpec, parse_args
from privasis_bench.engine.executor import Engine
from privasis_bench.pipeline.checkpoint import (
    append_checkpoint,
    fingerprint,
    output_hash,
    read_checkpoint,
)
from privasis_bench.pipeline.sanitize import SanitizedOutput
from privasis_bench.protocol.judge import (
    JUDGE_NONE_LABEL,
    Judge,
    JudgeInput,
    JudgeSettings,
    JudgeStats,
    run_sync,
)
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import file_ref

#: Bumped when the way judge answers are read changes, so checkpointed verdicts are re-derived
#: (from cached answers: no new calls). 2: answers cleaned before reading (think blocks, role tokens).
ANSWER_READING_VERSION = 2


@dataclass
class JudgeChoice:
    """Which judge (or none), with which prompts and settings, for one task."""

    spec: ModelSpec | None  # None: --judge none
    prompts: JudgePrompts
    settings: JudgeSettings

    @property
    def label(self) -> str:
        return JUDGE_NONE_LABEL if self.spec is None else spec_label(self.spec)

    def fingerprint(self) -> str:
        """What every verdict of this judge depends on (besides the record and the output)."""
        return fingerprint(
            {
                "judge": None if self.spec is None else self.spec.cache_identity(),
                "answer_reading": ANSWER_READING_VERSION,
                "prompts": self.prompts.hashes,
                "settings": self.settings.__dict__,
            }
        )

    def describe(self) -> dict[str, Any]:
        """The judge section of a results file."""
        base: dict[str, Any] = {
            "mode": "none" if self.spec is None else "model",
            "label": self.label,
            "spec": None if self.spec is None else self.spec.to_dict(),
            "key": None if self.spec is None else self.spec.key(),
            "parse_mode": self.settings.parse_mode,
            "prompt_hashes": self.prompts.hashes,
            "prompt_sources": {k: file_ref(v) for k, v in sorted(self.prompts.sources.items())},
        }
        if self.spec is not None:
            base.update(
                temperature=self.settings.temperature,
                guess_max_tokens=self.settings.guess_max_tokens,
                compare_max_tokens=self.settings.compare_max_tokens,
            )
        return base



def resolve_judge(
    task: TaskConfig,
    judge: str | None = None,
    judge_args: str | None = None,
    *,
    prompts_dir: str | Path | None = None,
    parse_mode: str | None = None,
    guess_max_tokens: int | None = None,
    compare_max_tokens: int | None = None,
) -> JudgeChoice:
    """The task's judge, overridden by ``--judge`` / ``--judge-args`` / ``--judge-prompts`` etc.

    ``judge="none"`` selects the deterministic direct/verbatim-only mode.
    """
    cfg = task.judge
    prompts = JudgePrompts.load(cfg.templates, prompts_dir)
    mode = parse_mode or cfg.parse_mode
    if mode not in ("official", "strict"):
        from privasis_bench.errors import PrivasisError

        raise PrivasisError(f"--parse-mode must be official or strict, not {mode!r}")
    if judge is not None and judge.strip().lower() == "none":
        return JudgeChoice(None, prompts, JudgeSettings(parse_mode=mode, enabled=False))  # type: ignore[arg-type]
    if judge is None:
        spec = ModelSpec.parse(cfg.model, {**cfg.model_args, **parse_args(judge_args)})
    else:
        spec = ModelSpec.parse(judge, judge_args)
    settings = JudgeSettings(
        parse_mode=mode,  # type: ignore[arg-type]
        temperature=cfg.temperature,
        guess_max_tokens=guess_max_tokens or cfg.guess_max_tokens,
        compare_max_tokens=compare_max_tokens or cfg.compare_max_tokens,
    )
    return JudgeChoice(spec, prompts, settings)



def judge_outputs(
    records: Sequence[Any],
    outputs: dict[str, SanitizedOutput],
    choice: JudgeChoice,
    engine: Engine | None,
    checkpoint: Path,
    *,
    desc: str = "judge",
) -> tuple[list[RecordVerdict], JudgeStats, int]:
    """Judge every record's output, reusing checkpointed verdicts; returns verdicts, stats, reused count.

    Every attribute's chain of questions runs as soon as its answers arrive (no stage barriers), at most
    :func:`records_in_flight` records at a time, and each record's verdict is appended to the checkpoint the
    moment it is complete.
    """
    fp = choice.fingerprint()
    done = read_checkpoint(checkpoint, fp) if choice.spec is not None else {}
    judge = Judge(None, choice.prompts, choice.settings)
    verdicts: dict[str, RecordVerdict] = {}
    todo: list[JudgeInput] = []
    shas: dict[str, str] = {}
    for record in records:
        out = outputs.get(record.id)
        failed = out is None or not out.ok
        text = None if failed else out.output
        sha = output_hash(text, failed)
        prev = done.get((record.id, sha))
        if prev is not None:
            verdicts[record.id] = prev
        else:
            shas[record.id] = sha
            todo.append(JudgeInput(record, text, output_failed=failed))
    reused = len(verdicts)

    def finished(verdict: RecordVerdict) -> None:
        verdicts[verdict.record_id] = verdict
        if choice.spec is not None:
            append_checkpoint(checkpoint, fp, [(shas[verdict.record_id], verdict)])

    async def judge_all() -> tuple[list[RecordVerdict], JudgeStats]:
        if engine is None:  # --judge none: deterministic tiers only, nothing is asked
            return await judge.ajudge(todo, _nothing_to_ask, on_record=finished)
        async with engine.stream(desc) as stream:
            return await judge.ajudge(todo, stream.ask, on_record=finished, window=records_in_flight(engine))

    _, stats = engine.run_async(judge_all) if engine is not None else run_sync(judge_all)
    return [verdicts[r.id] for r in records], stats, reused


def records_in_flight(engine: Engine) -> int:
    """How many records are judged at once: enough to keep every judge slot busy, few enough to bound memory."""
    return max(64, 8 * engine.concurrency)


async def _nothing_to_ask(request: Any) -> Any:
    raise RuntimeError("--judge none asks no question")


def spec_label(spec: ModelSpec) -> str:
    """A short display name: ``provider:model``, or just the provider for model-less baselines."""
    return f"{spec.provider}:{spec.model}" if spec.model else spec.provider
