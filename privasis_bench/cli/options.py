"""Command-line options shared by several commands, defined once and added to each command's signature.

Typer builds a command's options from its function signature, so options shared by ``run``, ``evaluate`` and
``sanitize`` would otherwise be repeated in every signature. :func:`with_options` adds named groups of options
to a command and hands their values to it as one :class:`Opts` object (``opts.judge``, ``opts.limit``, ...).
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from privasis_bench.engine.answers import HANDLING, AnswerPolicy
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.errors import PrivasisError

TasksOption = typer.Option(..., "--tasks", "-t", help="Task, group or tag names, or YAML files/directories (comma-separated or repeated).")
IncludePathOption = typer.Option(None, "--include-path", help="Extra directory or YAML file with task definitions.")
DataFilesOption = typer.Option(None, "--data-files", help="Read the task's rows from these local jsonl/json/parquet files instead of its configured source.")
LimitOption = typer.Option(None, "--limit", min=1, help="Use only the first N rows of each task.")
SkipInvalidOption = typer.Option(False, "--skip-invalid", help="Skip malformed rows (reported and counted) instead of stopping.")

#: name -> (annotation, typer option); one group per concern.
DATA_OPTIONS: dict[str, tuple[Any, Any]] = {
    "include_path": (Optional[List[str]], IncludePathOption),
    "data_files": (Optional[List[str]], DataFilesOption),
    "limit": (Optional[int], LimitOption),
    "skip_invalid": (bool, SkipInvalidOption),
    "instruction": (Optional[str], typer.Option(None, "--instruction", help="Instruction variant: base or smoothed (default: the task's).")),
}
#: The wording of the request to the model under test (default: the task's shipped template and cue).
TESTEE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "prompt_template": (Optional[Path], typer.Option(
        None, "--prompt-template",
        help="Sanitize template file with {instruction} and {text} (default: the task's); recorded with its sha256.")),
    "answer_cue": (Optional[str], typer.Option(
        None, "--answer-cue", help="Heading after which the sanitized text is expected (default: the task's).")),
}
JUDGE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "judge": (Optional[str], typer.Option(None, "--judge", help="Judge model spec (default: the task's), or 'none' for direct/verbatim-only scoring.")),
    "judge_args": (Optional[str], typer.Option(None, "--judge-args", help="Extra judge arguments k=v,k2=v2.")),
    "role": (Optional[List[str]], typer.Option(None, "--role", help="The model of a role the task's family asks: ROLE=provider:model[,k=v...] (repeatable; --judge is the judge role's alias).")),
    "judge_prompts": (Optional[Path], typer.Option(None, "--judge-prompts", help="Directory of judge templates (<key>.txt) overriding the task's.")),
    "parse_mode": (Optional[str], typer.Option(None, "--parse-mode", help="Judge answer parsing: official (default) or strict.")),
    "judge_concurrency": (Optional[int], typer.Option(None, "--judge-concurrency", min=1, help="Judge requests in flight (default: --concurrency).")),
    "judge_rpm": (Optional[float], typer.Option(None, "--judge-rpm", min=0.1, max=1_000_000.0, help="At most this many judge requests per minute (0.1 to 1,000,000).")),
    "judge_guess_max_tokens": (Optional[int], typer.Option(None, "--judge-guess-max-tokens", min=1, max=1_000_000, help="Judge budget for guessing questions (default 512).")),
    "judge_compare_max_tokens": (Optional[int], typer.Option(None, "--judge-compare-max-tokens", min=1, max=1_000_000, help="Judge budget for compare/inclusion questions (default 4096).")),
    "judge_truncated_answers": (Optional[str], typer.Option(None, "--judge-truncated-answers", help="Judge answers cut at the token budget: retry (default, unless the task's answer_policy says otherwise; asked again, never served from the cache; if they persist the record is unjudged and the command exits 1) or accept (read as they are, counted and shown on the board).")),
}
ENGINE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "concurrency": (int, typer.Option(4, "--concurrency", min=1, max=4096, help="Requests in flight at once.")),
    "max_attempts": (int, typer.Option(6, "--max-attempts", min=1, max=100, help="Tries per request, the first included.")),
    "max_timeouts": (int, typer.Option(2, "--max-timeouts", min=1, max=100, help="Tries per request that may end in a timeout before it fails (the timeout itself: timeout=SECONDS in the model or judge arguments).")),
    "retry_base_delay": (float, typer.Option(1.0, "--retry-base-delay", min=0.0, max=3600.0, help="First backoff delay in seconds (doubles per retry).")),
    "wait_for_server": (float, typer.Option(0.0, "--wait-for-server", min=0.0, max=86400.0, help="Seconds to wait for a model or judge server that refuses connections before it ever answered (one still starting); default 0: stop at once with one line naming its address.")),
    "retry_max_delay": (float, typer.Option(60.0, "--retry-max-delay", min=0.0, max=3600.0, help="Longest backoff delay in seconds; a server's Retry-After asking for longer is capped at it (and said so).")),
    "empty_answers": (str, typer.Option("retry", "--empty-answers", help="Empty answers (HTTP 200, no content): retry (default; a failed call, asked again, never cached) or accept.")),
    "truncated_answers": (Optional[str], typer.Option(None, "--truncated-answers", help="Model answers cut at the token budget: retry (a failed call if it persists, never cached) or accept (kept and counted). Default: retry (or the task's answer_policy); accept for the data recipes' steps, each of which parses what its small budget gives.")),
    "cache_dir": (Optional[Path], typer.Option(None, "--cache-dir", help="Response cache directory (default $PRIVASIS_BENCH_CACHE_DIR or ~/.cache/privasis-bench).")),
    "no_cache": (bool, typer.Option(False, "--no-cache", help="Neither read nor write the response cache.")),
    "progress": (bool, typer.Option(True, "--progress/--no-progress", help="Show progress bars (only on a terminal).")),
}
SCORING_OPTIONS: dict[str, tuple[Any, Any]] = {
    "bootstrap_samples": (Optional[int], typer.Option(None, "--bootstrap-samples", min=0, max=100_000, help="Bootstrap resamples for CIs (default: the task's, 1000).")),
    "seed": (Optional[int], typer.Option(None, "--seed", min=0, max=2**32 - 1, help="Bootstrap seed (default: the task's).")),
}
#: Options of the commands that write results (run, evaluate): what counts as a complete run.
CHECK_OPTIONS: dict[str, tuple[Any, Any]] = {
    "score_failed_as_empty": (bool, typer.Option(
        False, "--score-failed-as-empty",
        help="Score failed model outputs as empty outputs and exit 0 (recorded in results); by default they mark "
             "the results incomplete and the command exits 1.")),
    "max_off_label": (Optional[int], typer.Option(
        None, "--max-off-label", min=0,
        help="Judge answers that are not one of the expected labels (read the official way, counted as off_label) "
             "tolerated before the command exits 1 (default 0, or the task's answer_policy).")),
}


def _handling(name: str, value: str) -> str:
    if value not in HANDLING:
        raise PrivasisError(f"{name} must be one of {', '.join(HANDLING)}, not {value!r}")
    return value


def retry_policy(opts: "Opts") -> RetryPolicy:
    """The retry policy of ``ENGINE_OPTIONS``."""
    max_delay = max(opts.retry_max_delay, opts.retry_base_delay)
    return RetryPolicy(max_attempts=opts.max_attempts, max_timeouts=opts.max_timeouts, base_delay=opts.retry_base_delay,
                       max_delay=max_delay, max_retry_after=max_delay,  # a server's Retry-After is capped the same way
                       wait_for_server=opts.wait_for_server)


def answer_policy(opts: "Opts", role: str, *, truncated_default: str = "retry", task: Any = None) -> AnswerPolicy:
    """How empty and truncated answers of ``role`` ("model" or "judge") are handled: the command-line option if
    given, else the task's ``answer_policy`` (when ``task`` is given), else ``truncated_default`` (what an unset
    ``--truncated-answers`` means for this command; judge answers: retry)."""
    empty = _handling("--empty-answers", opts.empty_answers)
    tolerated = task.answer_policy if task is not None else None
    if role == "judge":
        value = opts.judge_truncated_answers or (tolerated and tolerated.judge_truncated_answers) or "retry"
        return AnswerPolicy(empty=empty, truncated=_handling("--judge-truncated-answers", value))  # type: ignore[arg-type]
    truncated = opts.truncated_answers or (tolerated and tolerated.truncated_answers) or truncated_default
    return AnswerPolicy(empty=empty, truncated=_handling("--truncated-answers", truncated))  # type: ignore[arg-type]


def tolerated_by_task(opts: "Opts", task: Any) -> dict[str, Any]:
    """The task's answer_policy settings that apply because no command-line option overrides them."""
    given = {"max_off_label": opts.max_off_label, "truncated_answers": opts.truncated_answers,
             "judge_truncated_answers": opts.judge_truncated_answers}
    return {k: v for k, v in task.answer_policy.set_fields().items() if given.get(k) is None}


class Opts:
    """The values of a command's shared option groups, as attributes."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"Opts({self.__dict__!r})"


def with_options(*groups: dict[str, tuple[Any, Any]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the options of ``groups`` to a command; the command receives them as ``opts: Opts``."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = [p for p in inspect.signature(command).parameters.values() if p.name != "opts"]
        shared = {name: spec for group in groups for name, spec in group.items()}
        clash = {p.name for p in own} & set(shared)
        if clash:
            raise TypeError(f"{command.__name__} declares shared options itself: {sorted(clash)}")
        extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=ann)
                 for name, (ann, opt) in shared.items()]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in shared}
            if values.get("data_files") is not None:
                check_data_files(values["data_files"])
            return command(**kwargs, opts=Opts(**values))

        hints = {k: v for k, v in inspect.get_annotations(command, eval_str=True).items() if k != "opts"}
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints.get(p.name, p.annotation)) for p in own]
        wrapper.__signature__ = inspect.Signature(own + extra)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {**hints, **{name: ann for name, (ann, _) in shared.items()}}
        return wrapper

    return decorate


def split_multi(values: Optional[List[str]]) -> list[str]:
    """Flatten repeated and comma-separated option values."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def check_data_files(values: Optional[List[str]]) -> None:
    """``--data-files`` given with no file in it (``--data-files ""``) is one line naming the option."""
    if values is not None and not split_multi(values):
        raise PrivasisError("--data-files names no file (an empty value); give one or more local jsonl, json or parquet "
                            "files (comma-separated or repeated), or leave the option out to read the task's own source")
