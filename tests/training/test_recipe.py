"""Training recipes: the paper's Appendix C settings, overrides, errors that name the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from privasis_bench.errors import DataError, PrivasisError, TaskConfigError
from privasis_bench.tasks.registry import builtin_tasks_dir
from privasis_bench.training.recipe import load_recipe
from privasis_bench.training.trainer import read_sft_jsonl


def test_the_0_6b_recipe_has_the_papers_settings():
    r = load_recipe("train_cleaner_0.6b")
    t = r.training
    assert r.base_model == "Qwen/Qwen3-0.6B" and r.lora is None
    assert (t.learning_rate, t.weight_decay, t.warmup_steps, t.max_steps) == (1e-5, 0.1, 23, 750)
    assert (t.num_devices, t.per_device_train_batch_size, t.gradient_accumulation_steps) == (4, 1, 20)
    assert t.global_batch_size == 80 and t.bf16 and t.optimizer == "adamw_torch" and t.lr_scheduler_type == "linear"


def test_the_4b_recipe_has_the_papers_settings():
    r = load_recipe("train_cleaner_4b")
    t = r.training
    assert r.base_model == "Qwen/Qwen3-4B-Instruct-2507"
    assert (t.learning_rate, t.weight_decay, t.warmup_steps, t.max_steps) == (1e-5, 0.01, 50, 1000)
    assert (t.num_devices, t.per_device_train_batch_size, t.gradient_accumulation_steps) == (2, 2, 16)
    assert t.global_batch_size == 64 and t.bf16


def test_fewer_devices_keep_the_global_batch_or_refuse():
    t = load_recipe("train_cleaner_4b").training
    assert t.accumulation_for(1) == 32 and t.accumulation_for(2) == 16
    with pytest.raises(PrivasisError, match="global batch 64"):
        t.accumulation_for(3)


def test_overrides_and_lora_as_an_option():
    r = load_recipe("train_cleaner_0.6b", ["training.max_steps=5", "lora.r=8", "base_model=/models/x"])
    assert r.training.max_steps == 5 and r.base_model == "/models/x"
    assert r.lora is not None and r.lora.r == 8 and r.lora.merge and r.lora.target_modules == "all-linear"
    assert r.sha256 != load_recipe("train_cleaner_0.6b").sha256


def test_recipe_errors_name_the_file_and_the_key(tmp_path: Path):
    with pytest.raises(TaskConfigError, match=r"train_cleaner_0\.6b\.yaml: training\.learnin_rate: unknown key"):
        load_recipe("train_cleaner_0.6b", ["training.learnin_rate=1"])
    with pytest.raises(TaskConfigError, match="training.max_steps"):
        load_recipe("train_cleaner_0.6b", ["training.max_steps=0"])
    with pytest.raises(TaskConfigError, match="no such training recipe"):
        load_recipe("train_cleaner_7b")
    other = tmp_path / "corpus.yaml"
    other.write_text("recipe: corpus\nkind: corpus\n")
    with pytest.raises(TaskConfigError, match="kind.*training recipe"):
        load_recipe(str(other))
    with pytest.raises(PrivasisError, match="KEY=VALUE"):
        load_recipe("train_cleaner_0.6b", ["training.max_steps"])


def test_the_cpu_smoke_recipe_includes_the_0_6b_one():
    path = builtin_tasks_dir() / "recipes" / "train_cleaner_cpu_smoke.yaml"
    r = load_recipe(str(path))
    assert r.recipe == "train_cleaner_cpu_smoke" and not r.training.bf16 and r.training.max_steps <= 10
    assert r.training.weight_decay == 0.0 and r.training.optimizer == "adamw_torch"


def test_training_data_problems_name_the_file_and_line(tmp_path: Path):
    good = '{"messages": [{"role": "user", "content": "p"}, {"role": "assistant", "content": "c"}]}'
    path = tmp_path / "t.jsonl"
    path.write_text(good + "\n" + '{"messages": [{"role": "user", "content": "p"}]}\n')
    with pytest.raises(DataError, match=r"t\.jsonl:2: messages must end with an assistant turn"):
        read_sft_jsonl(path)
    path.write_text(good + "\nnot json\n")
    with pytest.raises(DataError, match=r"t\.jsonl:2: invalid JSON"):
        read_sft_jsonl(path)
    path.write_text(good + "\n")
    assert read_sft_jsonl(path) == [{"prompt": [{"role": "user", "content": "p"}],
                                     "completion": [{"role": "assistant", "content": "c"}]}]
    path.write_text("\n")
    with pytest.raises(DataError, match="no training examples"):
        read_sft_jsonl(path)
