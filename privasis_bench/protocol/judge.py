"""The three-tier leak judge and the retention judge (protocol §3-4).

Judging is batch-oriented: for a list of records, every request of one stage (guesses on the
sanitized outputs, then original-record guesses and inclusion questions, then proximity
comparisons) is sent in one batch through a :data:`BatchRunner`, so the engine can run them
concurrently. Verdicts depend only on the answers, never on the order calls complete in.

``enabled=False`` is the deterministic ``--judge none`` mode: direct leaks and verbatim retention
only, no model involved.

Decisions this module makes where the protocol leaves room (all recorded per verdict):

* An empty output (whitespace only, or a failed model call) leaks nothing and retains nothing; no
  judge call is made for it (protocol §2).
* A judge call that fails after the engine's retries marks that attribute ``unjudged``; the record
  is then left out of the metrics and reported, and a re-run judges it again.
* In ``strict`` parse mode an answer that is not one clean label marks the attribute
  ``unparseable``: the record is left out of the metrics and listed separately (re-asking would
  return the same cached answer, so it is not retried). ``official`` mode never yields this.
* Every judge answer is first cleaned the way the reference client cleans it
  (:func:`~privasis_bench.protocol.answers.clean_answer`: text after the last ``</think>``, stripped,
  no leading role token); the verdict keeps that cleaned answer and, next to it, the raw one
  (``*_raw``). Only cleaned answers are matched, parsed or put into follow-up questions.
* Guesses are lower-cased once (after cleaning) and that lower-cased text is what the comparison and
  inclusion prompts receive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.data.records import Attribute, Record
from privasis_bench.protocol.answers import clean_answer, think_segment
from privasis_bench.protocol.judge_prompts import (
    JudgePrompts,
    ParseMode,
    parse_compare,
    parse_inclusion,
    render,
)
from privasis_bench.protocol.matching import is_empty_output, value_in, value_text
from privasis_bench.protocol.verdicts import KeepVerdict, RecordVerdict, TargetVerdict

#: Runs a batch of requests and returns one result per request, in order (``text`` None on failure).
BatchRunner = Callable[[list[ChatRequest]], list[ChatResult]]

JUDGE_NONE_LABEL = "none (direct/verbatim only)"


@dataclass(frozen=True)
class JudgeSettings:
    """How judge questions are asked and read (from ``task.judge`` plus command-line overrides)."""

    parse_mode: ParseMode = "official"
    temperature: float = 0.0
    guess_max_tokens: int = 512
    compare_max_tokens: int = 4096
    enabled: bool = True


@dataclass
class JudgeStats:
    """Judge call counts of one judging pass."""

    guess_sanitized: int = 0
    guess_original_computed: int = 0
    guess_original_reused: int = 0
    compare: int = 0
    inclusion: int = 0
    cached: int = 0
    failed: int = 0
    unparseable: int = 0

    def add(self, other: "JudgeStats") -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class JudgeInput:
    """One record to judge with the model's output (``output_failed``: the model call failed)."""

    record: Record
    output: str | None
    output_failed: bool = False


@dataclass
class _Job:
    verdict: Any
    record: Record
    text: str  # the raw sanitized output
    request: ChatRequest


def _readable(attr: Attribute) -> str:
    return attr.readable_name


class Judge:
    """Applies protocol §3-4 to records, one stage batch at a time."""

    def __init__(self, run_batch: BatchRunner | None, prompts: JudgePrompts, settings: JudgeSettings) -> None:
        if settings.enabled and run_batch is None:
            raise ValueError("a judge model is required unless the judge is disabled")
        self.run_batch = run_batch
        self.prompts = prompts
        self.settings = settings

    # -- requests ---------------------------------------------------------------------------
    def _guess_request(self, key: str, text: str, attr: Attribute) -> ChatRequest:
        prompt = render(self.prompts.get(key), text=think_segment(text), attribute=_readable(attr))
        return ChatRequest.user(prompt, max_tokens=self.settings.guess_max_tokens, temperature=self.settings.temperature)

    def target_guess_request(self, text: str, attr: Attribute) -> ChatRequest:
        """The inference question for a target on ``text`` (sanitized output or original record)."""
        key = "guess_abstract" if attr.kind == "abstract" else "guess_target"
        return self._guess_request(key, text, attr)

    def keep_guess_request(self, text: str, attr: Attribute) -> ChatRequest:
        """The guessing question for a keep attribute (no "guess anyway" clause)."""
        return self._guess_request("guess_keep", text, attr)

    def compare_request(self, attr: Attribute, response1: str, response2: str) -> ChatRequest:
        """The proximity question: which guess is closer to the true value."""
        prompt = render(
            self.prompts.get("compare"),
            attribute=_readable(attr),
            response1=response1,
            response2=response2,
            true_value=str(attr.value),
        )
        return ChatRequest.user(prompt, max_tokens=self.settings.compare_max_tokens, temperature=self.settings.temperature)

    def inclusion_request(self, text: str, guess: str, attr: Attribute) -> ChatRequest:
        """The retention question: is the information in the text or in the guess (YES/NO)."""
        prompt = render(
            self.prompts.get("inclusion"), text=think_segment(text), guess=guess, information=value_text(attr.value)
        )
        return ChatRequest.user(prompt, max_tokens=self.settings.compare_max_tokens, temperature=self.settings.temperature)

    # -- stages -----------------------------------------------------------------------------
    def _run(self, jobs: list[_Job]) -> list[ChatResult]:
        if not jobs:
            return []
        assert self.run_batch is not None
        results = self.run_batch([j.request for j in jobs])
        if len(results) != len(jobs):
            raise RuntimeError(f"judge batch returned {len(results)} results for {len(jobs)} requests")
        return results

    @staticmethod
    def _failed(verdict: Any, result: ChatResult, stats: JudgeStats) -> bool:
        if result.ok:
            if result.cached:
                stats.cached += 1
            return False
        stats.failed += 1
        verdict.error = result.error or "judge call failed"
        if isinstance(verdict, TargetVerdict):
            verdict.tier = "unjudged"
        else:
            verdict.via, verdict.retained = "unjudged", None
        return True

    def judge(self, items: Sequence[JudgeInput]) -> tuple[list[RecordVerdict], JudgeStats]:
        """Judge every record in ``items``; returns verdicts in input order and call counts."""
        stats = JudgeStats()
        verdicts: list[RecordVerdict] = []
        pending_targets: list[tuple[TargetVerdict, Attribute, Record, str]] = []
        pending_keep: list[tuple[KeepVerdict, Attribute, Record, str]] = []
        for item in items:
            rv, targets, keeps = self._deterministic(item)
            verdicts.append(rv)
            pending_targets += targets
            pending_keep += keeps
        if not self.settings.enabled:
            return verdicts, stats

        # Stage 1: guesses on the sanitized output (targets and keep attributes together).
        jobs = [_Job(v, r, t, self.target_guess_request(t, a)) for v, a, r, t in pending_targets]
        jobs += [_Job(v, r, t, self.keep_guess_request(t, a)) for v, a, r, t in pending_keep]
        stage1 = self._run(jobs)
        stats.guess_sanitized += len(jobs)
        attrs = {id(v): a for v, a, _, _ in pending_targets + pending_keep}
        need_proximity: list[_Job] = []
        need_inclusion: list[_Job] = []
        for job, result in zip(jobs, stage1):
            if self._failed(job.verdict, result, stats):
                continue
            job.verdict.guess_raw = result.text
            guess = clean_answer(result.text).lower()
            job.verdict.guess = guess
            attr = attrs[id(job.verdict)]
            if isinstance(job.verdict, TargetVerdict):
                if value_in(attr.value, guess, "any"):
                    job.verdict.tier = "inference"
                else:
                    need_proximity.append(_Job(job.verdict, job.record, job.text, self.target_guess_request(job.record.text, attr)))
            else:
                need_inclusion.append(_Job(job.verdict, job.record, job.text, self.inclusion_request(job.text, guess, attr)))

        # Stage 2: original-record guesses (cached across models) and inclusion questions.
        stage2 = self._run(need_proximity + need_inclusion)
        need_compare: list[_Job] = []
        for job, result in zip(need_proximity, stage2[: len(need_proximity)]):
            if self._failed(job.verdict, result, stats):
                continue
            if result.cached:
                stats.guess_original_reused += 1
            else:
                stats.guess_original_computed += 1
            job.verdict.original_guess_raw = result.text
            job.verdict.original_guess = clean_answer(result.text).lower()
            attr = attrs[id(job.verdict)]
            request = self.compare_request(attr, job.verdict.guess, job.verdict.original_guess)
            need_compare.append(_Job(job.verdict, job.record, job.text, request))
        for job, result in zip(need_inclusion, stage2[len(need_proximity):]):
            stats.inclusion += 1
            if self._failed(job.verdict, result, stats):
                continue
            verdict: KeepVerdict = job.verdict
            verdict.inclusion_answer_raw = result.text
            verdict.inclusion_answer = clean_answer(result.text)
            retained = parse_inclusion(verdict.inclusion_answer, self.settings.parse_mode)
            if retained is None:
                verdict.via, verdict.retained = "unparseable", None
                stats.unparseable += 1
            else:
                verdict.via, verdict.retained = "judge", retained

        # Stage 3: proximity comparisons.
        stage3 = self._run(need_compare)
        for job, result in zip(need_compare, stage3):
            stats.compare += 1
            if self._failed(job.verdict, result, stats):
                continue
            target: TargetVerdict = job.verdict
            target.compare_answer_raw = result.text
            target.compare_answer = clean_answer(result.text)
            leak = parse_compare(target.compare_answer, self.settings.parse_mode)
            if leak is None:
                target.tier = "unparseable"
                stats.unparseable += 1
            else:
                target.tier = "proximity" if leak else "sanitized"
        return verdicts, stats

    def _deterministic(self, item: JudgeInput):
        """Null values, the empty-output rule, tier 1 and verbatim retention (no model calls)."""
        record, output = item.record, item.output or ""
        empty = is_empty_output(item.output)
        rv = RecordVerdict(
            record_id=record.id,
            category=record.breakdown_category,
            record_type=record.record_type,
            output_failed=item.output_failed,
        )
        targets: list[tuple[TargetVerdict, Attribute, Record, str]] = []
        keeps: list[tuple[KeepVerdict, Attribute, Record, str]] = []
        text = output  # raw; request builders take the part after the first </think>
        for attr in record.targets:
            tv = TargetVerdict(name=attr.name, kind=attr.kind, group=attr.group, value=attr.value)
            if attr.value is None:
                tv.tier = "null"
            elif empty:
                tv.tier = "sanitized"  # an empty output leaks nothing
            elif value_in(attr.value, output, "any"):
                tv.tier = "direct"
            elif not self.settings.enabled:
                tv.tier = "sanitized"
            else:
                targets.append((tv, attr, record, text))
            rv.targets.append(tv)
        for attr in record.keep:
            kv = KeepVerdict(name=attr.name, value=attr.value, group=attr.group)
            if attr.value is None:
                kv.via, kv.retained = "null", None
            elif empty:
                kv.via, kv.retained = "empty_output", False  # an empty output retains nothing
            elif value_in(attr.value, output, "all"):
                kv.via, kv.retained = "verbatim", True
            elif not self.settings.enabled:
                kv.via, kv.retained = "verbatim", False
            else:
                keeps.append((kv, attr, record, text))
            rv.keep.append(kv)
        return rv, targets, keeps
