"""The judge stage: which judge a run uses, and judging every output with resume from the checkpoint.

``resolve_judge`` turns the task's judge section plus command-line overrides into a :class:`JudgeChoice`;
:class:`JudgeStep` judges one record at a time in the record flow, reusing verdicts from ``judged.jsonl`` and
appending each new one there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.adapters.spec import ModelSpec, parse_args, spec_label
from privasis_bench.data.records import Record
from privasis_bench.fsutil import AppendLog
from privasis_bench.protocol.checkpoint import (
    checkpoint_line,
    fingerprint,
    output_hash,
    read_checkpoint,
)
from privasis_bench.protocol.judge import (
    JUDGE_NONE_LABEL,
    Judge,
    JudgeInput,
    JudgeSettings,
    JudgeStats,
)
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.presets import (
    DEFAULT_EMPTY_OUTPUTS,
    DEFAULT_INCLUSION_TEXT,
    EMPTY_OUTPUT_RULES,
    INCLUSION_TEXTS,
)
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
                "settings": _fingerprinted(self.settings),
            }
        )

    def describe(self) -> dict[str, Any]:
        """The judge section of a results file."""
        base: dict[str, Any] = {
            "mode": "none" if self.spec is None else "model",
            "label": self.label,
            "spec": None if self.spec is None else self.spec.to_dict(),
            "key": None if self.spec is None else self.spec.cache_identity(),
            "parse_mode": self.settings.parse_mode,
            "empty_outputs": self.settings.empty_outputs,
            "inclusion_text": self.settings.inclusion_text,
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


def _fingerprinted(settings: JudgeSettings) -> dict[str, Any]:
    """The settings a checkpointed verdict depends on; the scoring rules only when not at their defaults, so a
    checkpoint written before the rules were options still matches."""
    values = dict(settings.__dict__)
    for name, default in (("empty_outputs", DEFAULT_EMPTY_OUTPUTS), ("inclusion_text", DEFAULT_INCLUSION_TEXT)):
        if values.get(name) == default:
            values.pop(name)
    return values


def resolve_judge(
    task: TaskConfig,
    judge: str | None = None,
    judge_args: str | None = None,
    *,
    prompts_dir: str | Path | None = None,
    parse_mode: str | None = None,
    guess_max_tokens: int | None = None,
    compare_max_tokens: int | None = None,
    empty_outputs: str | None = None,
    inclusion_text: str | None = None,
) -> JudgeChoice:
    """The task's judge, overridden by ``--judge`` / ``--judge-args`` / ``--judge-prompts`` etc.

    ``judge="none"`` selects the deterministic direct/verbatim-only mode. ``empty_outputs`` and ``inclusion_text``
    are the scoring rules of :mod:`privasis_bench.protocol.presets` (default: the harness's).
    """
    cfg = task.judge
    prompts = JudgePrompts.load(cfg.templates, prompts_dir)
    mode = parse_mode or cfg.parse_mode
    if mode not in ("official", "strict"):
        from privasis_bench.errors import PrivasisError

        raise PrivasisError(f"--parse-mode must be official or strict, not {mode!r}")
    rules = _rules(empty_outputs, inclusion_text)
    if judge is not None and judge.strip().lower() == "none":
        return JudgeChoice(None, prompts, JudgeSettings(parse_mode=mode, enabled=False, **rules))  # type: ignore[arg-type]
    if judge is None:
        spec = ModelSpec.parse(cfg.model, {**cfg.model_args, **parse_args(judge_args)})
    else:
        spec = ModelSpec.parse(judge, judge_args)
    settings = JudgeSettings(
        parse_mode=mode,  # type: ignore[arg-type]
        temperature=cfg.temperature,
        guess_max_tokens=guess_max_tokens or cfg.guess_max_tokens,
        compare_max_tokens=compare_max_tokens or cfg.compare_max_tokens,
        **rules,  # type: ignore[arg-type]
    )
    return JudgeChoice(spec, prompts, settings)


def _rules(empty_outputs: str | None, inclusion_text: str | None) -> dict[str, str]:
    """The scoring rules asked for, checked (one-line error naming the option)."""
    from privasis_bench.errors import PrivasisError

    rules = {"empty_outputs": empty_outputs or DEFAULT_EMPTY_OUTPUTS, "inclusion_text": inclusion_text or DEFAULT_INCLUSION_TEXT}
    if rules["empty_outputs"] not in EMPTY_OUTPUT_RULES:
        raise PrivasisError(f"--empty-outputs must be one of {', '.join(EMPTY_OUTPUT_RULES)}, not {empty_outputs!r}")
    if rules["inclusion_text"] not in INCLUSION_TEXTS:
        raise PrivasisError(f"--inclusion-text must be one of {', '.join(INCLUSION_TEXTS)}, not {inclusion_text!r}")
    return rules



class JudgeStep:
    """The judge's step of the record flow: a checkpointed verdict when there is one, else the judge's questions.

    Each verdict is appended to ``judged.jsonl`` the moment it is complete; verdicts there are reused when the
    judge fingerprint and the output are the same. ``ask`` answers one judge request (a judge engine's stream);
    with ``--judge none`` nothing is asked and nothing is checkpointed.
    """

    def __init__(self, choice: JudgeChoice, checkpoint: Path) -> None:
        self.choice, self.checkpoint = choice, checkpoint
        self.fingerprint = choice.fingerprint()
        self.done = read_checkpoint(checkpoint, self.fingerprint) if choice.spec is not None else {}
        self.judge = Judge(None, choice.prompts, choice.settings)
        self.stats = JudgeStats()
        self.reused = 0
        #: failed outputs are shown to the judge as "" (--score-failed-as-empty with --empty-outputs judge)
        self.failed_as_empty = False
        self._log: AppendLog | None = None
        self.ask: Callable[[ChatRequest], Awaitable[ChatResult]] = _nothing_to_ask

    async def verdict(self, record: Record, out: Any) -> RecordVerdict:
        """The record's verdict for this output (a failed or missing output is judged as failed)."""
        failed = out is None or not out.ok
        text = None if failed else out.output  # type: ignore[union-attr]
        if failed and out is not None and self.failed_as_empty:
            text = ""  # --score-failed-as-empty under the judge rule: judged as the official client reads it
        sha = output_hash(text, failed)
        prev = self.done.pop((record.id, sha), None)
        if prev is not None:
            self.reused += 1
            return prev
        verdict = await self.judge.ajudge_record(JudgeInput(record, text, output_failed=failed), self.ask, self.stats)
        if self.choice.spec is not None and verdict.status != "unjudged":
            if self._log is None:
                self._log = AppendLog(self.checkpoint)
            self._log.write(checkpoint_line(self.fingerprint, sha, verdict))
        return verdict

    def close(self) -> None:
        """Make every checkpointed verdict durable and close the checkpoint file."""
        if self._log is not None:
            self._log.close()


async def _nothing_to_ask(request: ChatRequest) -> ChatResult:
    raise RuntimeError("--judge none asks no question")
