"""docs/recipes.md's first shell block (generate, build-corpus, then runs of what was built and of the decomposition
and intact sanitizers), run in a fresh folder against the scripted OpenAI-compatible server of
tests/recipes/test_recipe_loop.py.

Stated substitutions (also in tests/docs_examples/test_doc_examples.py BLOCKS): ``OPENAI_BASE_URL`` points every ``openai:`` model of
the block (gpt-4.1, and the default judge gpt-oss-120b) at the scripted server, with a placeholder key; ``-n 100`` ->
``-n 2``; ``llamacpp:smollm2`` -> ``openai:smollm2`` on the same server (the in-process SmolLM2 through these recipes is
tests/integration/test_recipes_smollm2.py). Everything else is as written.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from cli_main import run_main
from doc_blocks import block_commands
from fake_openai_server import FakeOpenAIServer
from recipe_fake_model import answer

pytest.importorskip("sentence_transformers")
pytest.importorskip("vendi_score")
pytest.importorskip("rouge_score")
pytestmark = pytest.mark.slow  # five commands, two of them building a corpus (about 30 s)

PAGE, FIRST = "docs/recipes.md", "privasis-bench generate --recipe synthesis -m openai:gpt-4.1 -n 100 -o runs/corpus/"


def _answer(body: dict) -> str:
    """:func:`recipe_fake_model.answer`, and a label the judge accepts for its two labelled questions."""
    prompt = str(body["messages"][-1]["content"])
    if prompt.startswith("Two responses tried to recover"):
        return "neither"
    if prompt.startswith("Decide whether a piece of information is present"):
        return "YES"
    return answer(body)


def _argv(command: str) -> list[str]:
    argv = [re.sub(r"^llamacpp:smollm2$", "openai:smollm2", re.sub(r":llamacpp:smollm2$", ":openai:smollm2", a))
            for a in shlex.split(command)[1:]]
    return [("2" if a == "100" and argv[i - 1] == "-n" else a) for i, a in enumerate(argv)]


def test_the_recipes_block_runs_against_a_scripted_server(tmp_path: Path, monkeypatch, capsys) -> None:
    commands = block_commands(PAGE, FIRST)
    assert [c.split()[1] for c in commands] == ["generate", "build-corpus", "run", "run", "run"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / ".cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    with FakeOpenAIServer(answer=_answer) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        for command in commands:
            argv = _argv(command)
            code, out, err = run_main([*argv, "--no-progress"], monkeypatch, capsys)
            assert code == 0, f"{command}: exit {code}\n{out[-2000:]}{err[-2000:]}"
        models = {b["model"] for b in server.bodies}
    assert models == {"gpt-4.1", "gpt-oss-120b", "smollm2"}  # every model of the block was asked, nothing else
    assert len((tmp_path / "runs/corpus/corpus.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    for name in ("bench-eval", "decomp", "intact"):
        assert list((tmp_path / "runs" / name).rglob("results.json")), name
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cache", "runs"]  # the examples write under runs/ only
    assert json.loads((tmp_path / "runs/bench/benchmark.meta.json").read_text(encoding="utf-8"))
