"""The three-tier leak judge and the retention judge (protocol §3-4).

Judging is a set of independent chains: each target attribute asks its guess, then (if needed) the
guess on the original record, then the comparison; each keep attribute asks its guess, then the
inclusion question. Every chain moves on as soon as its own answer arrives, never waiting for other
attributes or records (:meth:`Judge.ajudge`, with an ``ask`` function such as the engine's request
stream). :meth:`Judge.judge` runs the same chains over a synchronous :data:`BatchRunner`, sending
the requests that become ready together as one batch. Verdicts depend only on the answers, never on
the order calls complete in.

``enabled=False`` is the deterministic ``--judge none`` mode: direct leaks and verbatim retention
only, no model involved.

Decisions this module makes where the protocol leaves room (all recorded per verdict):

* An empty output (whitespace only) follows ``settings.empty_outputs`` (:mod:`~privasis_bench.protocol.presets`):
  ``skip`` (default) leaks nothing and retains nothing with no judge call; ``judge`` (the reference rule) asks
  about it like any other text. A failed model call (or a missing output) is never shown to the judge.
* The retention question gets the judged text after the first ``</think>`` (``inclusion_text="after-think"``,
  default) or as it is (``"raw"``, the reference rule).
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
* Every verdict lists the judge answers that were cut at the answer budget (``cut_answers``: the field names of
  the answers whose result has ``finish_reason`` "length", a cached answer included), so the number of cut judge
  answers can be counted from the samples rows alone.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence, TypeVar

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
from privasis_bench.protocol.presets import (
    DEFAULT_EMPTY_OUTPUTS,
    DEFAULT_INCLUSION_TEXT,
    EmptyOutputRule,
    InclusionText,
)
from privasis_bench.protocol.verdicts import KeepVerdict, RecordVerdict, TargetVerdict

#: Runs a batch of requests and returns one result per request, in order (``text`` None on failure).
BatchRunner = Callable[[list[ChatRequest]], list[ChatResult]]

JUDGE_NONE_LABEL = "none (direct/verbatim only)"
T = TypeVar("T")


@dataclass(frozen=True)
class JudgeSettings:
    """How judge questions are asked and read (from ``task.judge`` plus command-line overrides)."""

    parse_mode: ParseMode = "official"
    temperature: float = 0.0
    guess_max_tokens: int = 512
    compare_max_tokens: int = 4096
    enabled: bool = True
    empty_outputs: EmptyOutputRule = DEFAULT_EMPTY_OUTPUTS  # "skip" (harness) or "judge" (reference rule)
    inclusion_text: InclusionText = DEFAULT_INCLUSION_TEXT  # "after-think" (harness) or "raw" (reference rule)

    def skips(self, output: str | None, failed: bool = False) -> bool:
        """Is this output scored without asking (nothing leaked, nothing retained)?

        A failed output has no text (None) and is never shown to the judge; a failed output handed over as ``""``
        (``--score-failed-as-empty``: what the official client reads) follows the empty-output rule like any
        empty output."""
        return output is None or (self.empty_outputs == "skip" and is_empty_output(output))


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


def _readable(attr: Attribute) -> str:
    return attr.readable_name


class Judge:
    """Applies protocol §3-4 to records, one stage batch at a time."""

    def __init__(self, run_batch: BatchRunner | None, prompts: JudgePrompts, settings: JudgeSettings) -> None:
        self.run_batch = run_batch  # only for the synchronous judge(); ajudge() takes an ``ask`` function
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
        """The retention question: is the information in the text or in the guess (YES/NO).

        The text is the judged text as it is (``inclusion_text="raw"``) or its segment after the first ``</think>``.
        """
        shown = text if self.settings.inclusion_text == "raw" else think_segment(text)
        prompt = render(self.prompts.get("inclusion"), text=shown, guess=guess, information=value_text(attr.value))
        return ChatRequest.user(prompt, max_tokens=self.settings.compare_max_tokens, temperature=self.settings.temperature)

    # -- chains ---------------------------------------------------------------------------
    @staticmethod
    def _note_cut(verdict: TargetVerdict | KeepVerdict, answer: str, result: ChatResult) -> None:
        """Record that the answer stored in field ``answer`` was cut at the token budget, when it was."""
        if result.finish_reason == "length":
            verdict.cut_answers = [*(verdict.cut_answers or []), answer]

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
        """Judge every record with the batch runner; returns verdicts in input order and call counts.

        The requests that become ready together (across all records) are sent as one batch.
        """
        if self.settings.enabled and self.run_batch is None:
            raise ValueError("a judge model is required unless the judge is disabled")
        batcher = _RoundBatcher(self.run_batch) if self.run_batch is not None else None
        ask = batcher.ask if batcher is not None else _no_judge
        return run_sync(lambda: self.ajudge(items, ask))

    async def ajudge(self, items: Sequence[JudgeInput], ask: AskFn, *, on_record: Callable[[RecordVerdict], None] | None = None,
                     window: int | None = None) -> tuple[list[RecordVerdict], JudgeStats]:
        """Judge every record, each attribute following its own chain of questions as soon as its answers come.

        ``ask`` answers one request; ``on_record`` is called with each record's verdict the moment it is complete;
        ``window`` bounds how many records are in flight at once. Verdicts come back in input order.
        """
        stats = JudgeStats()
        gate = asyncio.Semaphore(window) if window else None

        async def one(item: JudgeInput) -> RecordVerdict:
            if gate is None:
                return await self._record(item, ask, stats, on_record)
            async with gate:
                return await self._record(item, ask, stats, on_record)

        verdicts = await asyncio.gather(*(one(item) for item in items))
        return list(verdicts), stats

    async def ajudge_record(self, item: JudgeInput, ask: AskFn, stats: JudgeStats) -> RecordVerdict:
        """Judge one record (its attribute chains run concurrently); ``stats`` counts the questions asked."""
        return await self._record(item, ask, stats, None)

    async def _record(self, item: JudgeInput, ask: AskFn, stats: JudgeStats,
                      on_record: Callable[[RecordVerdict], None] | None) -> RecordVerdict:
        rv, targets, keeps = self._deterministic(item)
        if self.settings.enabled:
            await asyncio.gather(*(self._target_chain(v, a, r, t, ask, stats) for v, a, r, t in targets),
                                 *(self._keep_chain(v, a, t, ask, stats) for v, a, _, t in keeps))
        if on_record is not None:
            on_record(rv)
        return rv

    async def _guess(self, verdict: TargetVerdict | KeepVerdict, request: ChatRequest, ask: AskFn, stats: JudgeStats) -> bool:
        """Ask a guessing question about the output; keep the raw and the cleaned guess. False if the call failed."""
        stats.guess_sanitized += 1
        result = await ask(request)
        if self._failed(verdict, result, stats):
            return False
        verdict.guess_raw = result.text
        verdict.guess = clean_answer(result.text).lower()
        self._note_cut(verdict, "guess", result)
        return True

    async def _target_chain(self, verdict: TargetVerdict, attr: Attribute, record: Record, text: str, ask: AskFn,
                            stats: JudgeStats) -> None:
        """Tier 2 (guess on the output), then tier 3 (guess on the original record, then the comparison)."""
        if not await self._guess(verdict, self.target_guess_request(text, attr), ask, stats):
            return
        if value_in(attr.value, verdict.guess, "any"):
            verdict.tier = "inference"
            return
        result = await ask(self.target_guess_request(record.text, attr))  # cached across models
        if self._failed(verdict, result, stats):
            return
        if result.cached:
            stats.guess_original_reused += 1
        else:
            stats.guess_original_computed += 1
        verdict.original_guess_raw = result.text
        verdict.original_guess = clean_answer(result.text).lower()
        self._note_cut(verdict, "original_guess", result)
        result = await ask(self.compare_request(attr, verdict.guess, verdict.original_guess))
        stats.compare += 1
        if self._failed(verdict, result, stats):
            return
        verdict.compare_answer_raw = result.text
        verdict.compare_answer = clean_answer(result.text)
        self._note_cut(verdict, "compare_answer", result)
        leak = parse_compare(verdict.compare_answer, self.settings.parse_mode)
        if leak is None:
            verdict.tier = "unparseable"
            stats.unparseable += 1
        else:
            verdict.tier = "proximity" if leak else "sanitized"

    async def _keep_chain(self, verdict: KeepVerdict, attr: Attribute, text: str, ask: AskFn, stats: JudgeStats) -> None:
        """Retention step 2: guess the kept value from the output, then ask whether the information is there."""
        if not await self._guess(verdict, self.keep_guess_request(text, attr), ask, stats):
            return
        result = await ask(self.inclusion_request(text, verdict.guess, attr))
        stats.inclusion += 1
        if self._failed(verdict, result, stats):
            return
        verdict.inclusion_answer_raw = result.text
        verdict.inclusion_answer = clean_answer(result.text)
        self._note_cut(verdict, "inclusion_answer", result)
        retained = parse_inclusion(verdict.inclusion_answer, self.settings.parse_mode)
        if retained is None:
            verdict.via, verdict.retained = "unparseable", None
            stats.unparseable += 1
        else:
            verdict.via, verdict.retained = "judge", retained

    def _deterministic(self, item: JudgeInput):
        """Null values, the empty-output rule, tier 1 and verbatim retention (no model calls)."""
        record, output = item.record, item.output or ""
        empty = self.settings.skips(item.output, item.output_failed)
        rv = RecordVerdict(
            record_id=record.id,
            category=record.breakdown_category,
            record_type=record.record_type,
            output_failed=item.output_failed,
        )
        targets: list[tuple[TargetVerdict, Attribute, Record, str]] = []
        keeps: list[tuple[KeepVerdict, Attribute, Record, str]] = []
        text = output  # raw; request builders take the part after the first </think> where the rules say so
        for attr in record.targets:
            tv = TargetVerdict(name=attr.name, kind=attr.kind, group=attr.group, value=attr.value, cut_answers=[])
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
            kv = KeepVerdict(name=attr.name, value=attr.value, group=attr.group, cut_answers=[])
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


#: Answers one judge request (the engine's request stream, or a batch runner wrapped by :class:`_RoundBatcher`).
AskFn = Callable[[ChatRequest], Awaitable[ChatResult]]


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine ``make()`` to completion from synchronous code, also when the caller's thread already
    runs an event loop (then on a private loop in a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


async def _no_judge(request: ChatRequest) -> ChatResult:
    raise RuntimeError("the judge is disabled: no question may be asked")


class _RoundBatcher:
    """Turns a batch runner into ``ask``: the requests that become ready in one loop round go as one batch."""

    def __init__(self, run_batch: BatchRunner) -> None:
        self.run_batch = run_batch
        self.queue: list[tuple[ChatRequest, asyncio.Future]] = []
        self.scheduled = False

    async def ask(self, request: ChatRequest) -> ChatResult:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.queue.append((request, future))
        if not self.scheduled:
            self.scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self.scheduled = False
        queued, self.queue = self.queue, []
        results = self.run_batch([request for request, _ in queued])
        if len(results) != len(queued):
            raise RuntimeError(f"judge batch returned {len(results)} results for {len(queued)} requests")
        for (_, future), result in zip(queued, results):
            future.set_result(result)
