"""docs/models.md's provider catalogue: every line is run, here against the local provider fake or as written, or in
tests/docs_examples/test_doc_models_live.py against a real local model (models_lines.LINES says which, with the substitution)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from cli_main import run_main
from doc_fakes import commands, protocol_reply
from fake_batch_server import FakeBatchServer
from models_lines import AS_WRITTEN, FAKE, LINES, MODELS_FIRST, argv_for

KEY = "sk-doc-example-not-a-real-key"
HERE = [line for line, (how, _, _) in LINES.items() if how in (FAKE, AS_WRITTEN)]


def test_every_line_of_the_catalogue_has_a_way_to_run() -> None:
    documented = [shlex.join(argv) for argv in commands("docs/models.md", MODELS_FIRST)]
    assert sorted(documented) == sorted(LINES), "docs/models.md and tests/docs_examples/models_lines.py LINES differ"
    assert all(what for how, what, _ in LINES.values() if how != AS_WRITTEN)  # every substitution is stated


@pytest.mark.parametrize("line", HERE, ids=[line.split(" -t ")[0] for line in HERE])
def test_catalogue_line(line: str, tmp_path: Path, monkeypatch, capsys) -> None:
    with FakeBatchServer(reply=protocol_reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.root_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / ".cache"))
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        monkeypatch.chdir(tmp_path)
        argv = argv_for(line)
        code, out, err = run_main(argv, monkeypatch, capsys)
        assert code == 0, f"{shlex.join(argv)}: exit {code}\n{out[-2000:]}{err[-2000:]}"
        calls = server.live_calls
    task = argv[argv.index("-t") + 1]
    folder = tmp_path / argv[argv.index("-o") + 1] / task
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert results["complete"] is True
    if LINES[line][0] == FAKE:
        assert calls > 0  # the provider (model or judge) was really asked
        assert KEY not in "".join(p.read_text(errors="replace") for p in folder.iterdir() if p.is_file())
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cache", "runs"]  # the line writes under runs/ only
