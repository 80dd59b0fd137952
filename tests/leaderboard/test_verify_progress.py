"""Issue 42: ``leaderboard verify`` says what it is doing while it re-judges, also outside a terminal."""

from __future__ import annotations

import asyncio

from leaderboard_fakes import PinnedNameJudge, invoke, scrubber_dir

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.engine.progress import LINE_INTERVAL_ENV


class SlowJudge(PinnedNameJudge):
    async def agenerate(self, request: ChatRequest) -> ChatResult:
        await asyncio.sleep(0.02)
        return await super().agenerate(request)


def test_verify_prints_progress_lines_naming_the_entry_and_stops_when_done(subs, monkeypatch):
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: SlowJudge(spec.model))
    monkeypatch.setenv(LINE_INTERVAL_ENV, "0.05")
    result = invoke("leaderboard", "verify", str(scrubber_dir(subs)), "--seed", "3")
    text = result.output  # stdout and stderr as the user sees them, in order
    lines = text.splitlines()
    start = lines.index(f"rejudge {scrubber_dir(subs)}: asking the judge about up to 90 judged attributes")
    moving = [n for n, line in enumerate(lines) if line.startswith("[rejudge baselines/regex-scrubber on privasis_sample]")]
    assert moving and "calls done" in lines[moving[-1]]
    done = next(n for n, line in enumerate(lines) if line.strip().startswith("rejudge with llamacpp:smollm2:"))
    assert start < moving[0] and moving[-1] < done  # lines while the judge is asked, none after it is done
