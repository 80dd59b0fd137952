"""The model card of a trained cleaner: ``privasis_training.json`` (machine-readable) and ``README.md``.

It records what is needed to reproduce or audit the model: the resolved recipe and its hash, the training
data's sha256 and line count (plus the export report when it sits next to the data), the harness and
library versions, the device geometry, and the loss curve.
"""

from __future__ import annotations

import importlib.metadata
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from privasis_bench import __version__
from privasis_bench.results.files import atomic_write_text, dumps_json, git_revision
from privasis_bench.training.recipe import TrainRecipe
from privasis_bench.training.sft_export import file_sha256, report_path
from privasis_bench.training.trainer import TrainResult

CARD_JSON = "privasis_training.json"
CARD_FORMAT = "privasis-bench/training-card/1"
LIBRARIES = ("torch", "transformers", "trl", "peft", "accelerate", "datasets")


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def data_description(path: str | Path) -> dict[str, Any]:
    """sha256, example count and (if present) the export report of a training file."""
    p = Path(path)
    with open(p, encoding="utf-8") as fh:
        examples = sum(1 for line in fh if line.strip())
    info: dict[str, Any] = {"path": str(p.resolve()), "sha256": file_sha256(p), "examples": examples}
    sidecar = report_path(p)
    if sidecar.is_file():
        info["export"] = json.loads(sidecar.read_text(encoding="utf-8"))
    return info


def card_data(recipe: TrainRecipe, result: TrainResult, data_path: str | Path, eval_path: str | Path | None) -> dict[str, Any]:
    """Everything the card records, as plain data."""
    return {
        "format": CARD_FORMAT,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "harness": {"name": "privasis-bench", "version": __version__, "git_revision": git_revision()},
        "libraries": _versions(),
        "recipe": recipe.to_dict(),
        "recipe_sha256": recipe.sha256,
        "data": data_description(data_path),
        "eval_data": data_description(eval_path) if eval_path else None,
        "run": {
            "steps": result.steps,
            "examples": result.examples,
            "examples_used": result.examples_used,
            "device": result.device,
            "devices": result.devices,
            "gradient_accumulation_steps": result.gradient_accumulation_steps,
            "global_batch_size": recipe.training.global_batch_size,
            "runtime_s": result.runtime_s,
            "losses": result.losses,
            "eval_loss": result.eval_loss,
        },
    }


def _export_line(data: dict[str, Any]) -> str:
    """Which instruction the examples use and whether rows were filtered, from the export report."""
    settings = (data.get("export") or {}).get("settings")
    if not isinstance(settings, dict):
        return "export settings unknown (no export report next to the data)"
    kept = ("only rows whose own rewrite is fully successful (--only-successful)" if settings.get("only_successful")
            else "every corpus row, as in the paper (no success filter)")
    return f"{settings.get('instruction', '?')} instruction; {kept}"


def _markdown(card: dict[str, Any]) -> str:
    recipe, run, data = card["recipe"], card["run"], card["data"]
    losses = run["losses"]
    curve = f"{losses[0]['loss']:.4f} (step {losses[0]['step']}) → {losses[-1]['loss']:.4f} (step {losses[-1]['step']})" if losses else "not logged"
    dropped = run["examples"] - run["examples_used"]
    skipped = f" ({dropped} not trained on: their answer did not fit max_length)" if dropped else ""
    lora = "LoRA merged into the weights" if recipe.get("lora") else "full fine-tuning"
    return "\n".join([
        "---",
        f"base_model: {recipe['base_model']}",
        "library_name: transformers",
        "pipeline_tag: text-generation",
        "tags: [privasis-bench, text-sanitization, sft]",
        "---",
        "",
        f"# {recipe['recipe']}",
        "",
        f"A sanitization cleaner fine-tuned from `{recipe['base_model']}` ({lora}) with privasis-bench "
        f"{card['harness']['version']} and TRL {card['libraries'].get('trl')}.",
        "",
        f"- recipe: `{recipe['recipe']}` (sha256 `{card['recipe_sha256'][:16]}…`), {run['steps']} steps, "
        f"global batch {run['global_batch_size']} on {run['devices']} {run['device']} device(s)",
        f"- data: {data['examples']} examples{skipped}, sha256 `{data['sha256']}`",
        f"- examples: {_export_line(data)}",
        f"- training loss: {curve}",
        "",
        "Evaluate it in-process with `privasis-bench run -m hf:THIS_DIR -t privasis_vanilla`.",
        f"Everything above, and the full loss curve, is in `{CARD_JSON}`.",
        "",
    ])


def write_card(out_dir: str | Path, recipe: TrainRecipe, result: TrainResult, data_path: str | Path,
               eval_path: str | Path | None = None) -> dict[str, Any]:
    """Write ``privasis_training.json`` and ``README.md`` into the model directory; return the card data."""
    card = card_data(recipe, result, data_path, eval_path)
    out = Path(out_dir)
    atomic_write_text(out / CARD_JSON, dumps_json(card))
    atomic_write_text(out / "README.md", _markdown(card))
    return card
