"""The privasis-bench tasks as inspect_ai tasks: ``inspect eval privasis_bench/privasis_sample --model ...``.

inspect finds them through the ``inspect_ai`` entry point of this package (pyproject), which imports this module;
it is the only module that imports inspect_ai at top level, and nothing in the core imports it
(``pip install 'privasis-bench[inspect]'``).

What stays privasis-bench's own, so numbers agree with ``privasis-bench run``:

* dataset: the task's records through privasis-bench's loader (same records, same exclusions, same ids), each
  sample's input being the exact user message ``privasis-bench sanitize`` sends (one user turn, no system prompt);
* the model's answer is post-processed by the protocol's testee rules before judging;
* scorer: the protocol's three-tier judge and retention checks (:mod:`privasis_bench.protocol.judge`), asking its
  questions through inspect's model API under the ``grader`` role (``--model-role grader=...``; without it the
  model under test grades), so inspect's retries, cache and usage accounting apply to judge calls;
* metrics: the seven Table-4 metrics, computed from the per-sample verdicts by
  :func:`privasis_bench.protocol.metrics.headline_metrics`, the function behind ``results.json``.

Each sample's score is 1 for a Full Successful Record, else 0; its metadata holds the record's verdict (every
attribute's tier or retention, and the judge's raw answers) and the post-processed output.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.interop.lmeval import DocOptions, build_docs
from privasis_bench.protocol.judge import Judge, JudgeInput, JudgeSettings, JudgeStats
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.metrics import headline_metrics, is_full_success, scored
from privasis_bench.protocol.presets import preset_values
from privasis_bench.protocol.testee import postprocess_output
from privasis_bench.protocol.verdicts import RecordVerdict

GRADER_ROLE = "grader"


def _verdicts(scores: list[SampleScore]) -> list[RecordVerdict]:
    return [RecordVerdict.from_dict(s.score.metadata["verdict"]) for s in scores
            if s.score.metadata and isinstance(s.score.metadata.get("verdict"), dict)]


def _table4(name: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        value = headline_metrics(scored(_verdicts(scores)))[name]
        return float("nan") if value is None else float(value)

    return compute


# One registered metric per Table-4 column (inspect shows them side by side; NaN when undefined).
@metric
def sanitization_attribute() -> Metric:
    """Sanitized target attributes over all target attributes (percent)."""
    return _table4("sanitization_attribute")


@metric
def sanitization_attribute_per_record() -> Metric:
    """Mean per-record share of sanitized target attributes (percent)."""
    return _table4("sanitization_attribute_per_record")


@metric
def sanitization_record() -> Metric:
    """Records whose every judged target is sanitized (percent)."""
    return _table4("sanitization_record")


@metric
def retention_attribute() -> Metric:
    """Retained keep attributes over all keep attributes (percent)."""
    return _table4("retention_attribute")


@metric
def retention_attribute_per_record() -> Metric:
    """Mean per-record share of retained keep attributes (percent)."""
    return _table4("retention_attribute_per_record")


@metric
def retention_record() -> Metric:
    """Records whose every judged keep attribute is retained (percent)."""
    return _table4("retention_record")


@metric
def full_successful_record() -> Metric:
    """Records fully sanitized and fully retained (percent)."""
    return _table4("full_successful_record")


def _messages(request: ChatRequest) -> list[ChatMessage]:
    kinds = {"user": ChatMessageUser, "system": ChatMessageSystem, "assistant": ChatMessageAssistant}
    return [kinds[role](content=content) for role, content in request.messages]


def grader_ask(role: str = GRADER_ROLE) -> Any:
    """An async ``ChatRequest -> ChatResult`` that asks inspect's model for ``role`` (default: the model under test)."""

    async def ask(request: ChatRequest) -> ChatResult:
        model = get_model(role=role)
        config = GenerateConfig(max_tokens=request.max_tokens, temperature=request.temperature)
        try:
            out = await model.generate(_messages(request), config=config)
        except Exception as exc:  # noqa: BLE001 - inspect already retried; a failed question is a recorded failure
            return ChatResult(text=None, error=f"{type(exc).__name__}: {exc}")
        if out.error:
            return ChatResult(text=None, error=out.error)
        usage = out.usage
        return ChatResult(text=out.completion, finish_reason=out.stop_reason,
                          usage=Usage(usage.input_tokens if usage else 0, usage.output_tokens if usage else 0))

    return ask


@scorer(metrics=[sanitization_attribute(), sanitization_attribute_per_record(), sanitization_record(),
                 retention_attribute(), retention_attribute_per_record(), retention_record(), full_successful_record()])
def privasis_judge(privasis_task: str = "privasis_sample", data_files: list[str] | None = None,
                   judge_guess_max_tokens: int | None = None, judge_compare_max_tokens: int | None = None,
                   skip_invalid: bool = False, preset: str | None = None) -> Any:
    """The protocol's judge (three leak tiers, retention) on the post-processed output, asking the grader role.

    ``preset="paper"``: the paper evaluator's rules (empty outputs shown to the judge, the raw text in the retention
    question, its judge budgets and temperature), and a failed model call judged as ``""``, as its client reads it.
    """
    from privasis_bench.data.loading import load_records, with_data_files
    from privasis_bench.tasks.registry import load_task

    config = load_task(privasis_task)
    if data_files:
        config = with_data_files(config, list(data_files))
    records = {r.id: r for r in load_records(config, skip_invalid=skip_invalid).records}
    cfg = config.judge
    settings = JudgeSettings(parse_mode=cfg.parse_mode, temperature=cfg.temperature,
                             guess_max_tokens=judge_guess_max_tokens or cfg.guess_max_tokens,
                             compare_max_tokens=judge_compare_max_tokens or cfg.compare_max_tokens)
    if preset is not None:
        values = preset_values(preset)
        settings = replace(settings, parse_mode=values["--parse-mode"], temperature=values["judge.temperature"],
                           guess_max_tokens=values["--judge-guess-max-tokens"],
                           compare_max_tokens=values["--judge-compare-max-tokens"],
                           empty_outputs=values["--empty-outputs"], inclusion_text=values["--inclusion-text"])
    judge = Judge(None, JudgePrompts.load(cfg.templates), settings)
    ask = grader_ask()
    cue = config.prompt.answer_cue

    async def score(state: TaskState, target: Target) -> Score:
        record = records[str(state.sample_id)]
        failed = state.output is None or bool(state.output.error) or not state.output.choices
        raw = None if failed else state.output.completion
        output = None if raw is None else postprocess_output(raw, cue)
        if raw is None and preset is not None:
            output = ""  # the paper's client reads a failed call as "" and judges it
        verdict = await judge.ajudge_record(JudgeInput(record, output, output_failed=raw is None), ask, JudgeStats())
        success = verdict.status == "judged" and is_full_success(verdict)
        tiers = ", ".join(f"{t.name}: {t.tier}" for t in verdict.targets) or "no targets"
        kept = ", ".join(f"{k.name}: {'kept' if k.retained else 'lost' if k.retained is False else k.via}" for k in verdict.keep)
        return Score(value=1.0 if success else 0.0, answer=output,
                     explanation=f"targets: {tiers}; keep: {kept or 'none'}; status: {verdict.status}",
                     metadata={"verdict": verdict.to_dict(), "output": output, "raw_output": raw,
                               "scoring_preset": preset})

    return score


def privasis_inspect_task(privasis_task: str, instruction: str | None = None, data_files: list[str] | str | None = None,
                          limit: int | None = None, max_tokens: int | None = None, temperature: float | None = None,
                          judge_guess_max_tokens: int | None = None, judge_compare_max_tokens: int | None = None,
                          skip_invalid: bool = False, preset: str | None = None) -> Task:
    """The inspect Task for one privasis-bench task (records, exact sanitize prompt, protocol judge, Table-4 metrics).

    ``preset="paper"`` sets every setting of ``--preset paper`` (docs/reproducing.md); an argument given with another
    value is refused.
    """
    from privasis_bench.tasks.registry import load_task

    if preset is not None:
        instruction, max_tokens, temperature, judge_guess_max_tokens, judge_compare_max_tokens = _preset_arguments(
            preset, instruction=instruction, max_tokens=max_tokens, temperature=temperature,
            judge_guess_max_tokens=judge_guess_max_tokens, judge_compare_max_tokens=judge_compare_max_tokens)

    files = [f for f in data_files.split(",") if f] if isinstance(data_files, str) else data_files
    options = DocOptions(privasis_task=privasis_task, instruction=instruction, data_files=tuple(files) if files else None,
                         skip_invalid=skip_invalid)
    docs = build_docs(options)[: limit or None]
    samples = [Sample(input=d["prompt"], id=d["id"],
                      metadata={k: d[k] for k in ("record_type", "category", "privasis_task", "instruction_variant", "prompt_hash")})
               for d in docs]
    gen = load_task(privasis_task).generation
    return Task(
        dataset=MemoryDataset(samples, name=privasis_task),
        solver=generate(),
        scorer=privasis_judge(privasis_task, list(files) if files else None, judge_guess_max_tokens, judge_compare_max_tokens,
                              skip_invalid, preset),
        config=GenerateConfig(max_tokens=max_tokens or gen.max_tokens,
                              temperature=gen.temperature if temperature is None else temperature),
        name=privasis_task,
    )


def _preset_arguments(preset: str, **given: Any) -> tuple[Any, ...]:
    """The task arguments the preset fixes (instruction, model budget and temperature, judge budgets), in that order."""
    values = preset_values(preset)
    wanted = {"instruction": values["--instruction"], "max_tokens": values["--max-tokens"],
              "temperature": values["--temperature"], "judge_guess_max_tokens": values["--judge-guess-max-tokens"],
              "judge_compare_max_tokens": values["--judge-compare-max-tokens"]}
    for name, value in wanted.items():
        if given[name] is not None and given[name] != value:
            raise ValueError(f"{name}={given[name]!r} contradicts preset={preset}, which sets {name}={value!r}; drop one")
    return tuple(wanted.values())


@task
def privasis_sample(instruction: str | None = None, data_files: str | None = None, limit: int | None = None,
                    max_tokens: int | None = None, judge_guess_max_tokens: int | None = None,
                    judge_compare_max_tokens: int | None = None, preset: str | None = None) -> Task:
    """The bundled sample task (offline)."""
    return privasis_inspect_task("privasis_sample", instruction, data_files, limit, max_tokens, None,
                                 judge_guess_max_tokens, judge_compare_max_tokens, preset=preset)


@task
def privasis_vanilla(instruction: str | None = None, data_files: str | None = None, limit: int | None = None,
                     max_tokens: int | None = None, judge_guess_max_tokens: int | None = None,
                     judge_compare_max_tokens: int | None = None, preset: str | None = None) -> Task:
    """Privasis-Zero vanilla test set (``data_files`` for a local copy)."""
    return privasis_inspect_task("privasis_vanilla", instruction, data_files, limit, max_tokens, None,
                                 judge_guess_max_tokens, judge_compare_max_tokens, preset=preset)


@task
def privasis_hard(instruction: str | None = None, data_files: str | None = None, limit: int | None = None,
                  max_tokens: int | None = None, judge_guess_max_tokens: int | None = None,
                  judge_compare_max_tokens: int | None = None, preset: str | None = None) -> Task:
    """Privasis-Zero hard test set (``data_files`` for a local copy)."""
    return privasis_inspect_task("privasis_hard", instruction, data_files, limit, max_tokens, None,
                                 judge_guess_max_tokens, judge_compare_max_tokens, preset=preset)


@task
def privasis(privasis_task: str = "privasis_sample", instruction: str | None = None, data_files: str | None = None,
             limit: int | None = None, max_tokens: int | None = None, judge_guess_max_tokens: int | None = None,
             judge_compare_max_tokens: int | None = None, preset: str | None = None) -> Task:
    """Any privasis-bench task by name or YAML path (``-T privasis_task=...``)."""
    return privasis_inspect_task(privasis_task, instruction, data_files, limit, max_tokens, None,
                                 judge_guess_max_tokens, judge_compare_max_tokens, preset=preset)
