"""The same model through inspect_ai and through privasis-bench agrees: identical outputs and identical metrics.

``inspect eval privasis_bench/privasis_sample`` runs offline in a subprocess from a scratch directory (the task is
found through the package's entry point, no file path), with SmolLM2 behind llama.cpp's server (xllamacpp) as the model
under test and as the ``grader`` role; ``privasis-bench run`` then sanitizes and judges the same records with
the same server, and ``privasis-bench evaluate`` judges inspect's log. Greedy decoding and small budgets keep it
to about a minute on 2 cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app

try:  # works whether or not tests/ is a package
    from . import conftest as shared
except ImportError:
    import conftest as shared  # type: ignore[no-redef]

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LIMIT = 1  # one record (6 targets, 3 keep attributes: a few dozen judge questions) keeps it near a minute
MAX_TOKENS = 48
GUESS, COMPARE = 24, 8
TIMEOUT_S = 900


def _inspect_argv() -> list[str]:
    script = Path(sys.executable).parent / "inspect"
    return [str(script)] if script.exists() else [sys.executable, "-m", "inspect_ai"]


@pytest.fixture(scope="module")
def inspect_log(llama_server_url: str, tmp_path_factory: pytest.TempPathFactory, hf_home: Path) -> Path:
    shared.require_module("inspect_ai", "pip install '.[inspect]'")
    run_dir = tmp_path_factory.mktemp("inspect_run")
    argv = [*_inspect_argv(), "eval", "privasis_bench/privasis_sample",
            "--model", "openai-api/llamacpp/smollm2", "--model-role", "grader=openai-api/llamacpp/smollm2",
            "-T", f"limit={LIMIT}", "-T", f"max_tokens={MAX_TOKENS}",
            "-T", f"judge_guess_max_tokens={GUESS}", "-T", f"judge_compare_max_tokens={COMPARE}",
            "--max-connections", "1", "--log-dir", str(run_dir / "logs"), "--display", "none", "--no-fail-on-error"]
    env = shared.offline_env(hf_home)
    env.update({"LLAMACPP_BASE_URL": llama_server_url, "LLAMACPP_API_KEY": "unused-local", "INSPECT_LOG_LEVEL": "warning"})
    proc = subprocess.run(argv, cwd=run_dir, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    logs = sorted((run_dir / "logs").glob("*.eval"))
    assert len(logs) == 1, (proc.stdout[-2000:], proc.stderr[-2000:])
    return logs[0]


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _samples(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["record_id"]: r for r in rows}


def test_inspect_and_privasis_bench_agree(inspect_log: Path, llama_server_url: str, tmp_path: Path):
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(inspect_log))
    assert log.status == "success" and len(log.samples) == LIMIT
    inspect_outputs = {s.id: s.scores["privasis_judge"].metadata["output"] for s in log.samples}
    inspect_metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}

    spec = f"openai:smollm2,base_url={llama_server_url}"
    common = ["-t", "privasis_sample", "--judge", spec, "--judge-guess-max-tokens", str(GUESS),
              "--judge-compare-max-tokens", str(COMPARE), "--judge-truncated-answers", "accept", "--max-off-label", "100000",
              "--bootstrap-samples", "0", "--no-progress", "--concurrency", "1", "--cache-dir", str(tmp_path / "cache")]
    # inspect reads a cut answer as it is (no retry on truncation): so does this run
    _cli("run", "-m", spec, "--limit", str(LIMIT), "--max-tokens", str(MAX_TOKENS), "--truncated-answers", "accept",
         "-o", str(tmp_path / "run"), *common)
    task_dir = tmp_path / "run" / "privasis_sample"
    ours = _samples(task_dir / "samples.jsonl")
    assert set(ours) == set(inspect_outputs)
    for record_id, output in inspect_outputs.items():
        assert ours[record_id]["output"] == output, record_id  # identical sanitized outputs
    results = json.loads((task_dir / "results.json").read_text())
    headline = results["metrics"]["headline"]
    assert set(headline) == set(inspect_metrics)
    for name, value in headline.items():  # identical metrics (NaN in inspect where ours is undefined)
        got = inspect_metrics[name]
        assert (value is None and got != got) or got == pytest.approx(value), name

    # and inspect's log judged by privasis-bench: the same outputs, so the same metrics
    _cli("evaluate", "--predictions", str(inspect_log), "--limit", str(LIMIT), "-o", str(tmp_path / "evaluated"), *common)
    evaluated = json.loads((tmp_path / "evaluated" / "privasis_sample" / "results.json").read_text())
    assert evaluated["model"]["predictions"]["format"] == "inspect" and evaluated["model"]["predictions"]["missing"] == 0
    assert evaluated["metrics"]["headline"] == headline
