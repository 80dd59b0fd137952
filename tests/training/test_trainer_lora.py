"""LoRA as a recipe option: trained through peft, merged, saved as a plain model that transformers loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from integration.tiny_model import build_tiny_llama  # noqa: E402

from privasis_bench.training.recipe import load_recipe  # noqa: E402
from privasis_bench.training.trainer import train  # noqa: E402


@pytest.mark.slow
def test_lora_training_writes_a_merged_model(tmp_path: Path):
    import torch
    from transformers import AutoModelForCausalLM

    base = build_tiny_llama(tmp_path / "base")
    data = tmp_path / "t.jsonl"
    example = {"messages": [{"role": "user", "content": "Remove the name Ana Silva from: Ana Silva paid."},
                            {"role": "assistant", "content": "[name removed] paid."}]}
    data.write_text((json.dumps(example) + "\n") * 4)
    recipe = load_recipe("train_cleaner_cpu_smoke", [f"base_model={base}", "training.max_steps=3", "lora.r=4",
                                                     "training.max_length=128"])
    result = train(recipe, data, tmp_path / "out")
    assert result.steps == 3 and len(result.losses) == 3 and result.examples_used == result.examples == 4
    out = tmp_path / "out"
    assert not (out / "adapter_config.json").exists() and (out / "model.safetensors").is_file()
    trained = AutoModelForCausalLM.from_pretrained(out)
    original = AutoModelForCausalLM.from_pretrained(base)
    name = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(trained.state_dict()[name], original.state_dict()[name])  # the adapter was merged in
    assert not any("lora" in key for key in trained.state_dict())


@pytest.mark.slow
def test_every_example_longer_than_max_length_is_one_line_before_training(tmp_path: Path):
    """Issue 34: not TRL's 'num_samples=0' from deep inside the sampler, but the file, the budget and the fix."""
    from privasis_bench.training.trainer import TrainingError

    base = build_tiny_llama(tmp_path / "base")
    data = tmp_path / "t.jsonl"
    example = {"messages": [{"role": "user", "content": "Remove the name Ana Silva from: " + "Ana Silva paid. " * 40},
                            {"role": "assistant", "content": "[name removed] paid."}]}
    data.write_text((json.dumps(example) + "\n") * 2)
    recipe = load_recipe("train_cleaner_cpu_smoke", [f"base_model={base}", "training.max_steps=1", "lora.r=4",
                                                     "training.max_length=16"])
    with pytest.raises(TrainingError, match=r"t.jsonl: none of its 2 example\(s\) fits training.max_length \(16 tokens\)"):
        train(recipe, data, tmp_path / "out")
