"""Fine-tune a cleaner with Hugging Face TRL's ``SFTTrainer`` (install ``privasis-bench[train]``).

Each exported example becomes a conversational prompt-completion pair (the user turn is the prompt, the
assistant turn the completion), so by default the loss covers the sanitized text only, whatever the chat
template. LoRA (``peft``) is a recipe option; the adapter is merged so the output directory is a plain
Hugging Face model that transformers and vLLM load like any other. The loss of every logged step is written
to ``train_log.jsonl`` and returned.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privasis_bench.errors import DataError, PrivasisError
from privasis_bench.fsutil import loads_json, read_text
from privasis_bench.training.recipe import TrainRecipe

LOG_NAME = "train_log.jsonl"
CHECKPOINTS = "checkpoints"


class TrainingError(PrivasisError):
    """Training could not start or finish (missing extra, unreadable base model, bad data)."""


@dataclass
class TrainResult:
    """What a training run produced."""

    output_dir: Path
    steps: int
    losses: list[dict[str, float]] = field(default_factory=list)  # {"step", "loss", "learning_rate"}
    runtime_s: float = 0.0
    device: str = "cpu"
    devices: int = 1
    gradient_accumulation_steps: int = 1
    examples: int = 0
    examples_used: int = 0  # TRL drops examples whose answer is cut away entirely by max_length
    eval_loss: float | None = None


def read_sft_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read exported chat examples as prompt-completion pairs; each problem names the file and line."""
    pairs: list[dict[str, Any]] = []
    lines = read_text(path, "training JSONL (export-sft output)").splitlines()  # binary or not UTF-8: one line
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item = loads_json(line, f"{path}:{number}")
        try:
            messages = item["messages"]
            roles = [m["role"] for m in messages]
            contents = [m["content"] for m in messages]
        except (ValueError, KeyError, TypeError):
            raise DataError(f"{path}:{number}: expected a JSON object with messages [{{role, content}}, ...]") from None
        if len(messages) < 2 or roles[-1] != "assistant" or not all(isinstance(c, str) for c in contents):
            raise DataError(f"{path}:{number}: messages must end with an assistant turn and hold text contents")
        turns = [{"role": r, "content": c} for r, c in zip(roles, contents)]
        pairs.append({"prompt": turns[:-1], "completion": turns[-1:]})
    if not pairs:
        raise DataError(f"{path}: no training examples")
    return pairs


def _require_extra() -> None:
    import importlib.util

    missing = [m for m in ("torch", "transformers", "trl", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        raise TrainingError(f"training needs {', '.join(missing)}: pip install 'privasis-bench[train]' (CPU: pin torch first)")


def _load_base(recipe: TrainRecipe) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where = recipe.base_model
    local = Path(where).expanduser().is_dir()
    try:
        tokenizer = AutoTokenizer.from_pretrained(where)
        model = AutoModelForCausalLM.from_pretrained(
            where, dtype=torch.bfloat16 if recipe.training.bf16 else torch.float32
        )
    except Exception as exc:  # noqa: BLE001 - any load failure is one user-facing line
        hint = "" if local else " (a hub id: download it first, e.g. `huggingface-cli download ID`, or pass a local directory)"
        raise TrainingError(f"cannot load base model {where}: {type(exc).__name__}: {str(exc).splitlines()[0]}{hint}") from None
    if recipe.chat_template:
        tokenizer.chat_template = Path(recipe.chat_template).read_text(encoding="utf-8")
    if not tokenizer.chat_template:
        raise TrainingError(f"base model {where} has no chat template: set chat_template: FILE.jinja in the recipe")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def _loss_logger(losses: list[dict[str, float]], log_path: Path) -> Any:
    from transformers import TrainerCallback

    class LossLog(TrainerCallback):
        """Keeps every logged training loss and appends it to ``train_log.jsonl``."""

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
            if logs and "loss" in logs:
                entry = {"step": int(state.global_step), "loss": float(logs["loss"]),
                         "learning_rate": float(logs.get("learning_rate", 0.0))}
                losses.append(entry)
                with open(log_path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")

    return LossLog()


def device_count(use_cpu: bool) -> int:
    """Devices that share one optimiser step: the launcher's processes, or the GPUs one process spreads over."""
    import torch

    if "WORLD_SIZE" in os.environ:
        return int(os.environ["WORLD_SIZE"])
    return 1 if use_cpu else max(1, torch.cuda.device_count())


def sft_config(recipe: TrainRecipe, out_dir: Path, *, devices: int, use_cpu: bool) -> Any:
    """The TRL ``SFTConfig`` for a recipe (global batch kept on ``devices`` devices)."""
    from trl import SFTConfig

    t = recipe.training
    return SFTConfig(
        output_dir=str(out_dir / CHECKPOINTS),
        max_steps=t.max_steps,
        learning_rate=t.learning_rate,
        weight_decay=t.weight_decay,
        warmup_steps=t.warmup_steps,
        lr_scheduler_type=t.lr_scheduler_type,
        optim=t.optimizer,
        per_device_train_batch_size=t.per_device_train_batch_size,
        gradient_accumulation_steps=t.accumulation_for(devices),
        bf16=t.bf16,
        gradient_checkpointing=t.gradient_checkpointing,
        max_length=t.max_length,
        completion_only_loss=t.completion_only_loss,
        logging_steps=t.logging_steps,
        save_strategy="steps" if t.save_steps else "no",
        save_steps=t.save_steps or 500,
        seed=recipe.seed,
        data_seed=recipe.seed,
        report_to="none",
        use_cpu=use_cpu,
        disable_tqdm=True,
    )


def train(recipe: TrainRecipe, data_path: str | Path, out_dir: str | Path, *, eval_path: str | Path | None = None) -> TrainResult:
    """Fine-tune ``recipe.base_model`` on an exported JSONL and save the model to ``out_dir``."""
    _require_extra()
    import torch
    from datasets import Dataset
    from trl import SFTTrainer

    out = Path(out_dir)
    train_pairs = read_sft_jsonl(data_path)
    eval_pairs = read_sft_jsonl(eval_path) if eval_path else None
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / LOG_NAME
    log_path.unlink(missing_ok=True)
    use_cpu = not torch.cuda.is_available()
    devices = device_count(use_cpu)
    model, tokenizer = _load_base(recipe)
    peft_config = None
    if recipe.lora is not None:
        from peft import LoraConfig

        peft_config = LoraConfig(r=recipe.lora.r, lora_alpha=recipe.lora.alpha, lora_dropout=recipe.lora.dropout,
                                 target_modules=recipe.lora.target_modules, task_type="CAUSAL_LM")
    losses: list[dict[str, float]] = []
    args = sft_config(recipe, out, devices=devices, use_cpu=use_cpu)
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(train_pairs),
        eval_dataset=Dataset.from_list(eval_pairs) if eval_pairs else None,
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=[_loss_logger(losses, log_path)],
    )
    if len(trainer.train_dataset) == 0:
        raise TrainingError(f"{data_path}: none of its {len(train_pairs)} example(s) fits training.max_length "
                            f"({recipe.training.max_length} tokens) with its answer: raise max_length in the training "
                            "recipe, or export shorter examples")
    started = time.monotonic()
    trainer.train()
    runtime = time.monotonic() - started
    eval_loss = float(trainer.evaluate()["eval_loss"]) if eval_pairs else None
    checkpoints = out / CHECKPOINTS
    if checkpoints.is_dir() and not any(checkpoints.iterdir()):
        checkpoints.rmdir()
    final = trainer.model
    if recipe.lora is not None and recipe.lora.merge:
        final = final.merge_and_unload()
    final.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    return TrainResult(
        output_dir=out, steps=int(trainer.state.global_step), losses=losses, runtime_s=round(runtime, 3),
        device="cpu" if use_cpu else "cuda", devices=devices, gradient_accumulation_steps=args.gradient_accumulation_steps,
        examples=len(train_pairs), examples_used=len(trainer.train_dataset), eval_loss=eval_loss,
    )
