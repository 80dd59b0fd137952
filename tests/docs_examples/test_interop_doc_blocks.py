"""docs/interop.md's two shell blocks (lm-eval, then inspect_ai, each judged by ``privasis-bench evaluate``), run by
bash in a fresh folder against llama.cpp's server serving SmolLM2 (the session fixture of this folder).

Stated substitutions (also in tests/docs_examples/test_doc_examples.py BLOCKS): port 8080 -> the fixture's free port;
``pip install '.[lmeval]'`` -> a check that every requirement of the extra is installed (tests install nothing);
``<timestamp>``/``<id>`` -> ``*`` (the one file the run wrote); smaller runs: ``lm_eval`` and ``evaluate`` get
``--limit 1`` and ``-T limit=5`` -> ``-T limit=1``, with the small token budgets SmolLM2 needs here (lm-eval
``max_gen_toks=64``, inspect ``max_tokens=48``, judge 24/8 tokens, cut and off-label judge answers accepted, as in
tests/integration/test_run_smollm2.py). The commands themselves, ``$(privasis-bench lm-eval-path)`` and the
``export`` of inspect's provider variables included, run as written.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import block_commands
from integration.conftest import offline_env, require_module
from packaging.requirements import Requirement

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PAGE = "docs/interop.md"
JUDGE_SMALL = ("--limit 1 --judge-guess-max-tokens 24 --judge-compare-max-tokens 8 --judge-truncated-answers accept "
               "--max-off-label 1000")


def _run_block(lines: list[str], cwd: Path, hf_home: Path, *, installed: bool = False) -> subprocess.CompletedProcess:
    """Run ``lines`` by bash in ``cwd`` with this process's environment (offline); ``installed``: without PYTHONPATH,
    so the installed package is the one imported (inspect names a package's tasks ``privasis_bench/...`` only when
    it is installed, not when it is imported from a checkout on PYTHONPATH)."""
    env = offline_env(hf_home)
    if installed:
        env.pop("PYTHONPATH", None)
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
                "PRIVASIS_BENCH_CACHE_DIR": str(cwd / ".cache"), "INSPECT_LOG_LEVEL": "warning"})
    script = "set -euo pipefail\n" + "\n".join(lines) + "\n"
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)


def _assert_extra_installed(dist: str, extra: str) -> None:
    """Every requirement ``dist[extra]`` adds is installed at a version it accepts, the extras it names included."""
    wanted = [Requirement(r) for r in md.requires(dist) or []]
    wanted = [r for r in wanted if r.marker is not None and r.marker.evaluate({"extra": extra})]
    assert wanted, f"the installed {dist} declares no {extra!r} extra"
    for req in wanted:
        assert req.specifier.contains(md.version(req.name), prereleases=True), (str(req), md.version(req.name))
        for sub in req.extras:
            _assert_extra_installed(req.name, sub)


def _evaluate_line(line: str) -> str:
    assert line.startswith("privasis-bench evaluate ") and "--judge llamacpp:smollm2" in line
    return f"{line} {JUDGE_SMALL}"


def _results(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_lmeval_block_runs_against_a_local_server(llama_server_url: str, in_process_smollm2, tmp_path: Path,
                                                       hf_home: Path) -> None:
    require_module("lm_eval", "pip install '.[lmeval]'")
    install, lm_eval, evaluate = block_commands(PAGE, "pip install '.[lmeval]'")
    assert install == "pip install '.[lmeval]'"
    _assert_extra_installed("privasis-bench", "lmeval")
    port = llama_server_url.rsplit(":", 1)[1].split("/", 1)[0]
    assert "127.0.0.1:8080" in lm_eval
    lm_eval = lm_eval.replace("127.0.0.1:8080", f"127.0.0.1:{port}") + " --limit 1 --gen_kwargs max_gen_toks=64"
    evaluate = _evaluate_line(evaluate.replace("<timestamp>", "*"))
    proc = _run_block([lm_eval, evaluate], tmp_path, hf_home)  # no key: local-chat-completions needs none
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-4000:]}"
    assert len(list((tmp_path / "runs/lmeval_out/smollm2").glob("samples_privasis_sample_*.jsonl"))) == 1
    res = _results(tmp_path / "runs/lmeval/privasis_sample/results.json")
    assert res["model"]["predictions"]["format"] == "lmeval" and res["model"]["predictions"]["matched"] == 1
    assert res["judge"]["label"] == "llamacpp:smollm2" and res["counts"]["judged_records"] == 1 and res["complete"]


def test_the_inspect_block_runs_against_a_local_server(llama_server_url: str, in_process_smollm2, tmp_path: Path,
                                                        hf_home: Path) -> None:
    require_module("inspect_ai", "pip install '.[inspect]'")
    export, inspect, evaluate = block_commands(PAGE, "# any OpenAI-compatible server: inspect's openai-api provider")
    port = llama_server_url.rsplit(":", 1)[1].split("/", 1)[0]
    assert export.startswith("export LOCAL_BASE_URL=http://127.0.0.1:8080/v1 ") and "-T limit=5" in inspect
    export = export.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    inspect = inspect.replace("-T limit=5", "-T limit=1") + (" -T max_tokens=48 -T judge_guess_max_tokens=24"
                                                             " -T judge_compare_max_tokens=8 --display none")
    evaluate = _evaluate_line(evaluate.replace("<timestamp>", "*").replace("<id>", "*"))
    proc = _run_block([export, inspect, evaluate], tmp_path, hf_home, installed=True)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-4000:]}"
    assert len(list((tmp_path / "runs/inspect-logs").glob("*_privasis-sample_*.eval"))) == 1
    res = _results(tmp_path / "runs/from-inspect/privasis_sample/results.json")
    assert res["model"]["predictions"]["format"] == "inspect" and res["model"]["predictions"]["missing"] == 0
    assert res["judge"]["label"] == "llamacpp:smollm2" and res["counts"]["judged_records"] == 1 and res["complete"]
