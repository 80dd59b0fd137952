"""Training recipes: typed YAML files under ``tasks/recipes/`` (``kind: sft``) plus command-line overrides.

A recipe states the optimisation the way a paper reports it (devices × micro-batch × accumulation = global
batch). :meth:`TrainingSettings.accumulation_for` keeps that global batch on however many devices a run
actually has, and refuses when it cannot be kept exactly.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from privasis_bench.errors import PrivasisError, TaskConfigError
from privasis_bench.tasks.registry import _first_error, builtin_tasks_dir, load_yaml_with_includes

RECIPES_DIR = "recipes"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrainingSettings(_Strict):
    """Optimiser, schedule, batch geometry and precision."""

    learning_rate: float = Field(gt=0)
    weight_decay: float = Field(ge=0)
    warmup_steps: int = Field(ge=0)
    max_steps: int = Field(gt=0)
    optimizer: str = "adamw_torch"
    lr_scheduler_type: str = "linear"  # linear warm-up then linear decay
    num_devices: int = Field(1, ge=1)
    per_device_train_batch_size: int = Field(ge=1)
    gradient_accumulation_steps: int = Field(ge=1)
    bf16: bool = True
    gradient_checkpointing: bool = True
    max_length: int = Field(4096, ge=16)
    completion_only_loss: bool = True  # loss on the assistant turn only
    logging_steps: int = Field(10, ge=1)
    save_steps: int = Field(0, ge=0)  # 0: only the final model is written

    @property
    def global_batch_size(self) -> int:
        """Examples per optimiser step, as the recipe states it."""
        return self.num_devices * self.per_device_train_batch_size * self.gradient_accumulation_steps

    def accumulation_for(self, devices: int) -> int:
        """Accumulation steps that keep the recipe's global batch on ``devices`` devices."""
        per_step = devices * self.per_device_train_batch_size
        if self.global_batch_size % per_step:
            raise PrivasisError(
                f"the recipe's global batch {self.global_batch_size} is not a multiple of {devices} device(s) × "
                f"micro-batch {self.per_device_train_batch_size}; set training.per_device_train_batch_size with --set"
            )
        return self.global_batch_size // per_step


class LoraSettings(_Strict):
    """LoRA through ``peft`` (for small GPUs); the adapter is merged into the saved model by default."""

    r: int = Field(16, ge=1)
    alpha: int = Field(32, ge=1)
    dropout: float = Field(0.05, ge=0, lt=1)
    target_modules: str | list[str] = "all-linear"
    merge: bool = True


class TrainRecipe(_Strict):
    """One ``kind: sft`` recipe file."""

    recipe: str
    kind: Literal["sft"]
    description: str = ""
    base_model: str
    chat_template: str | None = None  # a Jinja file for a base model without a chat template
    seed: int = 0
    training: TrainingSettings
    lora: LoraSettings | None = None
    source_file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (recorded in the model card)."""
        return self.model_dump(mode="json")

    @property
    def sha256(self) -> str:
        """Hash of the resolved recipe (after includes and overrides; the source path left out)."""
        data = {k: v for k, v in self.to_dict().items() if k != "source_file"}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()


def recipe_path(name_or_path: str) -> Path:
    """A recipe file: a path, or the name of a shipped recipe (``train_cleaner_0.6b``)."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            raise TaskConfigError(name_or_path, None, "recipe file not found")
        return path.resolve()
    directory = builtin_tasks_dir() / RECIPES_DIR
    candidate = directory / f"{name_or_path}.yaml"
    if candidate.is_file():
        return candidate
    known = sorted(p.stem for p in directory.glob("train_*.yaml"))
    raise TaskConfigError(name_or_path, None, f"no such training recipe; shipped: {', '.join(known)} (or pass a YAML path)")


def _apply_override(data: dict[str, Any], assignment: str) -> None:
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise PrivasisError(f"--set {assignment!r}: expected KEY=VALUE, e.g. training.max_steps=10")
    *parents, leaf = key.strip().split(".")
    node = data
    for part in parents:
        if node.get(part) is None:  # an absent or null section (``lora: null``) starts empty
            node[part] = {}
        if not isinstance(node[part], dict):
            raise PrivasisError(f"--set {assignment!r}: {part} is not a section")
        node = node[part]
    try:
        node[leaf] = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        raise PrivasisError(f"--set {assignment!r}: the value is not valid YAML") from None


def load_recipe(name_or_path: str, overrides: list[str] | None = None) -> TrainRecipe:
    """Read a recipe (with ``include:``), apply ``--set KEY=VALUE`` overrides and validate it."""
    path = recipe_path(name_or_path)
    data = load_yaml_with_includes(path)
    if data.get("kind") != "sft":
        raise TaskConfigError(str(path), "kind", f"is {data.get('kind')!r}: `train` needs a training recipe (kind: sft)")
    for assignment in overrides or []:
        _apply_override(data, assignment)
    if isinstance(data.get("chat_template"), str):
        data["chat_template"] = str((path.parent / data["chat_template"]).resolve())
    data["source_file"] = str(path)
    try:
        return TrainRecipe.model_validate(data)
    except ValidationError as exc:
        key, message = _first_error(exc)
        raise TaskConfigError(str(path), key, message) from None
