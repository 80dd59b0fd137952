"""Runs for the leaderboard tests: a baseline without judge and a run "judged by" the pinned judge's name.

``PinnedNameJudge`` stands in for ``llamacpp:smollm2`` (the sample task's pinned judge) so a verified-track
submission can be produced in a second: it answers every shipped judge prompt from a hash of the prompt,
giving a mix of sanitized, proximity-leak, retained and missed verdicts.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from typer.testing import CliRunner

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult, Usage
from privasis_bench.cli import app
from privasis_bench.leaderboard.submit import submit_run

TASK = "privasis_sample"
ANSWERS = ("YES", "NO", "response1", "neither", "yes, probably")


class PinnedNameJudge(Adapter):
    provider = "llamacpp"

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        digest = hashlib.sha256(request.messages[0][1].encode()).digest()
        return ChatResult(text=ANSWERS[digest[0] % len(ANSWERS)], usage=Usage(10, 2))


def invoke(*args: str, expect: int = 0):
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result


def make_runs(base: Path, monkeypatch) -> dict[str, Path]:
    """Run identity (no judge) and regex-scrubber (pinned judge name) on the sample task; submit both."""
    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: PinnedNameJudge(spec.model) if spec.provider == "llamacpp" else real(spec))
    common = ("--tasks", TASK, "--no-progress", "--cache-dir", str(base / "cache"))  # the task's own bootstrap settings: verify requires them
    invoke("run", "-m", "identity", "--judge", "none", "-o", str(base / "runs/identity"), *common)
    # the fake judge answers off-label on purpose ("yes, probably"): tolerate it, as a demo board would
    invoke("run", "-m", "regex-scrubber", "--judge", "llamacpp:smollm2", "-o", str(base / "runs/scrubber"), *common,
           "--max-off-label", "100000")
    subs = base / "submissions"
    submit_run(base / "runs/identity", "baselines/identity", track="self-reported", label="sample task", root=subs)
    submit_run(base / "runs/scrubber", "baselines/regex-scrubber", track="verified", label="sample task", root=subs)
    return {"runs": base / "runs", "submissions": subs}


def fresh_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def scrubber_dir(subs: Path) -> Path:
    """The verified-track regex-scrubber submission folder."""
    return subs / "baselines__regex-scrubber" / TASK


def identity_dir(subs: Path) -> Path:
    """The self-reported identity submission folder."""
    return subs / "baselines__identity" / TASK
