"""docs/replacement.md's shell block, every command run in a fresh folder holding the reader's own files.

Stated substitutions (also in tests/docs_examples/test_doc_examples.py BLOCKS): the reader's ``replacements.json`` is written here
(each sample document's applicant name replaced, with the pairs reported) and ``runs/other`` is a run of ``identity``;
``-t tab_replacement_sample`` names ``tab_replacement_sample.yaml`` in that folder, the shipped task (retrieval attack)
with 3 k-means restarts instead of 50.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from cli_main import run_main
from doc_blocks import block_commands

pytestmark = pytest.mark.slow  # three scoring passes over the sample (about 25 s of CPU)

REPO = Path(__file__).resolve().parents[2]
PAGE, FIRST = "docs/replacement.md", "privasis-bench run -m regex-scrubber:,names=true -t tab_replacement_sample"


def _fast_task(folder: Path) -> None:
    """``folder/tab_replacement_sample.yaml``: the shipped task (same name), the cheap attack, absolute paths."""
    body = (REPO / "tasks" / "tab_replacement_sample.yaml").read_text(encoding="utf-8")
    assert "trir_attacker: retrieval" in body and "nmi_restarts: 50" in body
    body = body.replace("nmi_restarts: 50", "nmi_restarts: 3")
    body = body.replace("include: _tab_base.yaml", f"include: {REPO / 'tasks' / '_tab_base.yaml'}")
    body = body.replace("sample/", f"{REPO / 'tasks' / 'sample'}/").replace("prompts/", f"{REPO / 'tasks' / 'prompts'}/")
    (folder / "tab_replacement_sample.yaml").write_text(body, encoding="utf-8")


def _replacements(folder: Path) -> None:
    """The reader's predictions file: ``{doc_id: {"output", "replacements": [...]}}``."""
    body = {}
    for doc in json.loads((REPO / "tasks" / "sample" / "tab_sample.json").read_text(encoding="utf-8")):
        name, text = doc["meta"]["applicant"], doc["text"]
        start = text.find(name)
        pairs = [{"start": start, "end": start + len(name), "original": name, "replacement": "the applicant"}] if start >= 0 else []
        body[doc["doc_id"]] = {"output": text.replace(name, "the applicant"), "replacements": pairs}
    (folder / "replacements.json").write_text(json.dumps(body), encoding="utf-8")


def _argv(command: str) -> list[str]:
    argv = shlex.split(command)[1:]
    return [f"{a}.yaml" if a == "tab_replacement_sample" and argv[i - 1] == "-t" else a for i, a in enumerate(argv)]


def test_the_replacement_block_runs_with_the_readers_files(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / ".cache"))
    _fast_task(tmp_path)
    _replacements(tmp_path)
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_replacement_sample.yaml", "-o", "runs/other",
                               "--no-progress"], monkeypatch, capsys)
    assert code == 0, out + err
    commands = block_commands(PAGE, FIRST)
    assert [c.split()[1] for c in commands] == ["run", "evaluate", "replacement-chart"]
    for command in commands:
        argv = _argv(command)
        code, out, err = run_main([*argv, "--no-progress"] if argv[0] == "run" else argv, monkeypatch, capsys)
        assert code == 0, f"{command}: exit {code}\n{out[-1500:]}{err[-1500:]}"
    scrubbed = json.loads((tmp_path / "runs/repl/tab_replacement_sample/results.json").read_text(encoding="utf-8"))
    saved = json.loads((tmp_path / "runs/repl-saved/tab_replacement_sample/results.json").read_text(encoding="utf-8"))
    assert scrubbed["scorer"]["trir"]["attacker"] == saved["scorer"]["trir"]["attacker"] == "retrieval"
    assert 0.0 < scrubbed["metrics"]["tps"] < 1.0 and saved["metrics"]["tps_documents"] == 10
    rows = [json.loads(x) for x in (tmp_path / "runs/repl-saved/tab_replacement_sample/samples.jsonl").read_text().splitlines()]
    assert rows and all(r["replacement_source"] == "predictions" for r in rows)  # the reader's pairs were read
    svg = (tmp_path / "tradeoff.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and "as published" in svg
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cache", "replacements.json", "runs", "tab_replacement_sample.yaml",
                                                         "tradeoff.svg"]
