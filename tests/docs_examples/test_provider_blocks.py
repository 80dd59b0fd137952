"""The README's "Evaluate a model" block and docs/batch.md's ``--batch`` block, run against a local provider.

Substitutions (stated in tests/docs_examples/test_doc_examples.py BLOCKS): the OpenAI API is the local fake
(``OPENAI_BASE_URL``, a dummy ``OPENAI_API_KEY``), the judge's ``http://HOST:PORT/v1`` is the same fake,
``privasis_vanilla`` reads the bundled sample records (``--data-files``, the identical schema) instead of the hub,
and ``--limit 2`` keeps it short. Everything else runs as the doc writes it, in process, in a temporary folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from doc_fakes import SAMPLE_DATA, commands, protocol_reply, replace
from fake_batch_server import FakeBatchServer

pytest.importorskip("openai")

KEY = "sk-doc-example-not-a-real-key"
SHORT = ["--data-files", str(SAMPLE_DATA), "--limit", "2", "--no-progress"]
FAST_BATCHES = ["--batch-quiet", "0.2", "--batch-poll", "0.05"]  # the defaults wait 2 s and poll every 30 s


@pytest.fixture
def provider(tmp_path: Path, monkeypatch):
    """The fake provider as the OpenAI API, the working directory a fresh folder."""
    with FakeBatchServer(reply=protocol_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / ".cache"))
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        monkeypatch.chdir(tmp_path)
        yield server


def _finished(out: Path) -> dict:
    results = json.loads((out / "privasis_vanilla" / "results.json").read_text(encoding="utf-8"))
    assert results["complete"] is True and results["counts"]["scored"] == 2, results["counts"]
    rows = [json.loads(x) for x in (out / "privasis_vanilla" / "samples.jsonl").read_text().splitlines()]
    assert rows and all(r["output"].startswith("REWRITTEN ") for r in rows)  # the fake's rewrites, judged
    assert KEY not in "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    return results


def test_readme_evaluate_block(provider: FakeBatchServer, tmp_path: Path, monkeypatch, capsys) -> None:
    [argv] = commands("README.md", "privasis-bench run -m openai:gpt-4.1-mini -t privasis_vanilla -o runs/gpt-4.1-mini \\")
    argv = replace(argv, "http://HOST:PORT/v1", provider.base_url)
    code, out, err = run_main([*argv, *SHORT], monkeypatch, capsys)
    assert code == 0, out[-2000:] + err[-2000:]
    results = _finished(tmp_path / "runs" / "gpt-4.1-mini")
    assert (results["model"]["key"], results["judge"]["key"]) == ("openai:gpt-4.1-mini", "openai:gpt-oss-120b")
    assert provider.live_calls >= 4  # two rewrites and their judge questions
    assert "San. Attr" in out  # the results table
    # re-running the same command resumes: nothing left to do, no call
    calls = provider.live_calls
    code, out, err = run_main([*argv, *SHORT], monkeypatch, capsys)
    assert code == 0 and provider.live_calls == calls, out[-2000:] + err[-2000:]


def test_batch_block(provider: FakeBatchServer, tmp_path: Path, monkeypatch, capsys) -> None:
    run, sanitize = commands("docs/batch.md",
                             "privasis-bench run --model openai:gpt-4.1-mini --tasks privasis_vanilla --judge openai:gpt-4.1 \\")
    for argv in (run, sanitize):
        code, out, err = run_main([*argv, *SHORT, *FAST_BATCHES], monkeypatch, capsys)
        assert code == 0, out[-2000:] + err[-2000:]
    assert (tmp_path / "runs" / "rewrites" / "privasis_vanilla" / "sanitized.jsonl").is_file()
    results = _finished(tmp_path / "runs" / "batched")
    assert provider.live_calls == 0 and len(provider.batches) >= 2  # the model's wave, then the judge's
    for role in ("model", "judge"):
        assert results["usage"][role]["batched_requests"] == results["usage"][role]["requests"] > 0
