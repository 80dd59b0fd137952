"""The task YAML schema: typed, frozen, and strict about unknown keys.

A task file names a dataset, the sanitization prompt, generation settings, the judge and the
metrics. ``include:`` pulls in a shared base file (child keys override, nested maps merge).
Relative file paths are resolved against the YAML file that wrote them.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from privasis_bench.errors import DataError, PrivasisError
from privasis_bench.fsutil import read_template_text
from privasis_bench.tasks.family import DEFAULT_FAMILY, FAMILIES
from privasis_bench.tasks.paths import portable_name


class _Strict(BaseModel):
    # inf and nan are never a setting (a YAML `.nan` temperature would reach every request)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


#: What a version looks like: ``1``, ``1.0``, ``2.1.3``, optionally with a suffix such as ``1.0-rc1``.
VERSION = re.compile(r"\d+(\.\d+)*([-+][A-Za-z0-9.]+)?")


def check_version(value: Any) -> Any:
    """A task or group version as text; ``abc`` or ``''`` is an error (results compare versions)."""
    text = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if isinstance(text, str) and not VERSION.fullmatch(text.strip()):
        raise ValueError(f"version {text!r} must be a version number such as 1, 1.0 or 2.1.3")
    return text.strip() if isinstance(text, str) else text


class DatasetConfig(_Strict):
    """Where the rows come from: a hub dataset (path/name/split/revision) or local files."""

    path: str | None = None  # hub repo id, e.g. nvidia/Privasis-Zero
    name: str | None = None  # hub config, e.g. vanilla
    split: str = "test"
    revision: str | None = None
    data_files: list[str] | None = None  # local jsonl/json/parquet files (absolute after loading)
    format: Literal["json", "jsonl", "parquet"] | None = None
    category_column: str | None = None  # defaults to the first of "category", "tag" present

    @field_validator("data_files", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def describe(self) -> str:
        """A short human-readable source description."""
        if self.data_files:
            return ", ".join(self.data_files)
        rev = f"@{self.revision}" if self.revision else ""
        return f"hf://{self.path}{rev} [{self.name}/{self.split}]"


class PromptConfig(_Strict):
    """The request sent to the model under test (protocol §2)."""

    template: str  # file with {instruction} and {text} placeholders
    instruction: Literal["base", "smoothed"] = "base"
    answer_cue: str  # the heading after which the sanitized text is expected

    @field_validator("answer_cue")
    @classmethod
    def _cue_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("answer_cue must not be empty: it is the heading the answer is read after "
                             "(e.g. '# Sanitized Text')")
        return value


class GenerationConfig(_Strict):
    """Generation settings for the model under test."""

    temperature: float = Field(0.0, ge=0.0)
    max_tokens: int = Field(9024, gt=0, le=1_000_000)  # output budget; a bigger one is a typo


class JudgeTemplates(_Strict):
    """Judge prompt files (protocol §3-4)."""

    guess_target: str  # inference question for a drop target ("guess even if absent")
    guess_abstract: str  # same, asking for a concise specific guess
    guess_keep: str  # guessing question for a keep attribute (no "guess anyway" clause)
    compare: str  # proximity: which of two responses is closer to the true value
    inclusion: str  # retention: is this information present? YES/NO


class JudgeConfig(_Strict):
    """The judge: default model spec, prompts, answer parsing and call budgets."""

    model: str
    model_args: dict[str, Any] = Field(default_factory=dict)
    templates: JudgeTemplates
    parse_mode: Literal["official", "strict"] = "official"
    temperature: float = Field(0.0, ge=0.0)
    guess_max_tokens: int = Field(512, gt=0, le=1_000_000)
    compare_max_tokens: int = Field(4096, gt=0, le=1_000_000)


class MetricsConfig(_Strict):
    """Scoring options: bootstrap settings and breakdown sizes."""

    bootstrap_samples: int = Field(1000, ge=0, le=100_000)
    bootstrap_seed: int = Field(1234, ge=0, le=2**32 - 1)
    confidence: float = Field(0.95, gt=0, lt=1)
    top_failed_attributes: int = Field(20, ge=0)
    breakdown_keys: list[Literal["category", "record_type"]] = Field(default_factory=lambda: ["category"])


class AnswerPolicyConfig(_Strict):
    """What a task tolerates by default (a command-line option still wins): for demo tasks on tiny local models.

    Unset fields keep the strict defaults (no off-label judge answers, cut answers asked again). Not part of the
    config hash: it changes what counts as a finished run, not how anything is scored; results record it.
    """

    max_off_label: int | None = Field(None, ge=0)
    truncated_answers: Literal["retry", "accept"] | None = None
    judge_truncated_answers: Literal["retry", "accept"] | None = None

    def set_fields(self) -> dict[str, Any]:
        """The settings this task supplies (unset ones left out)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class TaskConfig(_Strict):
    """A fully resolved task."""

    task: str
    tag: list[str] = Field(default_factory=list)
    version: str
    description: str = ""
    dataset: DatasetConfig
    prompt: PromptConfig
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    judge: JudgeConfig | None = None  # required by the default (privasis) scorer; span scorers have no judge
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    #: Which scorer turns outputs into metrics: "privasis" (the judge-based protocol) or a registered span scorer
    #: such as "tab"; ``scorer_args`` are that scorer's own settings (paths in them are relative to the YAML).
    scorer: str = DEFAULT_FAMILY
    scorer_args: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    answer_policy: AnswerPolicyConfig = Field(default_factory=AnswerPolicyConfig)
    source_file: str | None = None  # set by the loader: the YAML this task came from

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        return check_version(value)

    @field_validator("scorer")
    @classmethod
    def _known_scorer(cls, value: str) -> str:
        if value not in FAMILIES:
            raise ValueError(f"unknown scorer {value!r}; known: {', '.join(FAMILIES.names())}")
        return value

    @model_validator(mode="after")
    def _judge_for_the_judged_scorer(self) -> "TaskConfig":
        if self.judge is None and "judge" in FAMILIES.get(self.scorer).roles:
            raise ValueError(f"judge: the {self.scorer} scorer needs a judge section (model and templates)")
        return self

    @field_validator("task")
    @classmethod
    def _task_name_is_a_plain_name(cls, value: str) -> str:
        # the name becomes a directory under --output: no separators, no "..", nothing hidden or empty
        if not TASK_NAME.fullmatch(value) or value in (".", ".."):
            raise ValueError(f"task name {value!r} must be letters, digits, '.', '_' or '-' (it names the output "
                             "directory), not starting with '.'")
        return value

    @field_validator("tag", mode="before")
    @classmethod
    def _tag_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def with_data_files(self, data_files: list[str]) -> "TaskConfig":
        """A copy of the task reading local files instead of its configured source (each must exist)."""
        files = [str(Path(p).resolve()) for p in data_files]
        for path in files:
            if not Path(path).is_file():
                raise DataError(f"--data-files: file not found: {path}")
        dataset = self.dataset.model_copy(update={"data_files": files, "path": None, "revision": None})
        return self.model_copy(update={"dataset": dataset})

    def config_hash(self, known_contents: dict[str, str] | None = None) -> str:
        """sha256 over the resolved config plus the contents of every template it names.

        Paths are named portably (shipped files as ``privasis_bench:tasks/...``, others by base name), so the hash
        is the same wherever the package or the task lives. ``known_contents`` maps a template path to the sha256
        of its contents, for a template that is not at hand (a verifier recomputing a submission's hash).
        """
        payload = self.model_dump(exclude={"source_file", "answer_policy"})
        # paths in their portable form, so the hash is the same wherever the package or the task lives
        payload["dataset"]["data_files"] = [portable_name(p) for p in self.dataset.data_files or []] or None
        payload["prompt"]["template"] = portable_name(self.prompt.template)
        if self.judge is not None:
            payload["judge"]["templates"] = {k: portable_name(v) for k, v in self.judge.templates.model_dump().items()}
        if not self.scorer_args and self.scorer == DEFAULT_FAMILY:  # hashes of tasks written before scorers stay put
            payload.pop("scorer_args")
            payload.pop("scorer")
        for key in SCORER_PATH_ARGS:
            if isinstance(payload.get("scorer_args", {}).get(key), str):
                payload["scorer_args"][key] = portable_name(payload["scorer_args"][key])
        known = known_contents or {}
        payload["_template_contents"] = {portable_name(p): known.get(p) or _file_sha(p) for p in self.template_files()}
        blob = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    def template_files(self) -> list[str]:
        """Every prompt template file the task uses."""
        judge = list(self.judge.templates.model_dump().values()) if self.judge is not None else []
        scorer = [str(self.scorer_args[k]) for k in SCORER_PATH_ARGS if isinstance(self.scorer_args.get(k), str)]
        return [self.prompt.template, *judge, *scorer]


class GroupConfig(_Strict):
    """A named set of tasks (``group: privasis`` with ``task: [...]``)."""

    group: str
    task: list[str]
    version: str = "1"
    description: str = ""
    source_file: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        return check_version(value)


def _file_sha(path: str) -> str:
    """sha256 of a template's text as it is loaded (one trailing newline stripped), so two files that give the same
    prompts hash alike; "missing" when it cannot be read."""
    try:
        text = read_template_text(path)
    except PrivasisError:
        return "missing"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: What a task name may look like: it becomes ``<output>/<task>/``.
TASK_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")

#: ``scorer_args`` keys that name template files (resolved, hashed and recorded like the other templates).
SCORER_PATH_ARGS: tuple[str, ...] = ("instruction_template", "background")

#: Dotted keys whose values are file paths relative to the YAML that sets them.
PATH_KEYS: tuple[str, ...] = (
    "dataset.data_files",
    "prompt.template",
    "judge.templates.guess_target",
    "judge.templates.guess_abstract",
    "judge.templates.guess_keep",
    "judge.templates.compare",
    "judge.templates.inclusion",
    *(f"scorer_args.{k}" for k in SCORER_PATH_ARGS),
)
