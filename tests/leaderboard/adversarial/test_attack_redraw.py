"""Attack class *redraw*: a forger who re-runs CI until the random re-judge sample misses the forged decisions, hides
behind the disagreement allowance, or stalls the re-judge.

The rule (privasis_bench/leaderboard/rejudge.py, docs/publishing.md): a disagreement the judge reproduces every time
it is asked is *firm* and rejects; only disagreements on which the judge itself is unstable are excused, up to
``--max-disagreements``. With n = 90 draws an entry with 5% forged decisions passes one run with probability
0.95^90 < 1%.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from attack_tools import forge_keep, rescored, rewrite, rows_of
from leaderboard_fakes import TASK, PinnedNameJudge, invoke, scrubber_dir

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.leaderboard.rejudge import REJUDGE_CHARS_PER_TOKEN, judged_attributes, sample_size
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.leaderboard.verify import verify_submission

ALL = "100000"  # --rejudge larger than any test pool: the whole pool is re-asked


class CountingJudge(PinnedNameJudge):
    calls: list[str] = []

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        CountingJudge.calls.append(request.messages[0][1])
        return await super().agenerate(request)


@pytest.fixture(autouse=True)
def judge(monkeypatch):
    CountingJudge.calls = []
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: CountingJudge(spec.model))
    return CountingJudge


@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_two_forged_decisions_in_a_pool_reasked_whole_never_pass_the_allowance(subs, seed):
    folder = scrubber_dir(subs)
    forge_keep(folder, 2)
    assert verify_submission(folder).ok  # every file check passes: only the re-judge can tell
    out = invoke("leaderboard", "verify", str(folder), "--rejudge", ALL, "--max-disagreements", "2", "--seed", seed,
                 expect=1).output
    assert "2 firm disagreement(s)" in out and out.count("(firm: the same when asked 2 more times)") == 2


def test_a_five_percent_forgery_fails_every_rerun_of_ci(subs):
    folder = scrubber_dir(subs)
    pool = len(judged_attributes(rows_of(folder)))
    assert pool > sample_size()  # a sample, not the whole pool: each run draws anew
    forge_keep(folder, -(-pool // 20))  # 5% of the judged decisions, rounded up
    for seed in range(5):  # re-running CI is a fresh draw; each one is rejected
        out = invoke("leaderboard", "verify", str(folder), "--max-disagreements", "2", "--seed", str(seed),
                     expect=1).output
        assert "firm disagreement(s)" in out


class UnstableJudge(PinnedNameJudge):
    """The pinned judge, except that on the retention question about one value it first answers the opposite of the
    recorded answer and then the recorded one: a decision on which the judge itself is unstable."""

    value, recorded, seen = "", "", 0

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        prompt = request.messages[0][1]
        if UnstableJudge.value and f"Information: {UnstableJudge.value}\n" in prompt and \
                prompt.startswith(UnstableJudge.inclusion_head):
            UnstableJudge.seen += 1
            flipped = "NO" if UnstableJudge.recorded.lower() == "yes" else "YES"
            return ChatResult(text=flipped if UnstableJudge.seen == 1 else UnstableJudge.recorded)
        return await super().agenerate(request)


def test_the_allowance_excuses_only_a_decision_the_judge_itself_answers_both_ways(subs, monkeypatch):
    folder = scrubber_dir(subs)
    keep = next(k for r in rows_of(folder) for k in r.get("keep") or [] if k["via"] == "judge"
                and str(k.get("inclusion_answer")).lower() in ("yes", "no") and isinstance(k["value"], str)
                and len(k["value"]) > 6)
    template = Path(shipped_task(TASK).judge.templates.inclusion).read_text()
    UnstableJudge.value, UnstableJudge.recorded = str(keep["value"]), keep["inclusion_answer"]
    UnstableJudge.inclusion_head = template[:20]
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: UnstableJudge(spec.model))
    UnstableJudge.seen = 0
    out = invoke("leaderboard", "verify", str(folder), "--rejudge", ALL, "--max-disagreements", "1").output
    assert "(unstable: asked again it gives" in out and "1 unstable excused" not in out  # noted, passes
    UnstableJudge.seen = 0
    out = invoke("leaderboard", "verify", str(folder), "--rejudge", ALL, "--max-disagreements", "0", expect=1).output
    assert "1 unstable disagreement(s), over --max-disagreements 0" in out


def test_the_verifier_prints_none_of_its_transport_settings(subs, tmp_path):
    report = tmp_path / "report.json"
    out = invoke("leaderboard", "verify", str(subs), "--judge-args", "base_url=http://verifier-host.internal:8080,timeout=99",
                 "--report", str(report)).output
    assert "verifier-host" not in out and "verifier-host" not in report.read_text()
    assert "rejudge with llamacpp:smollm2:" in out


def test_an_entry_padded_past_the_rejudge_bound_fails_closed_without_a_judge_call(subs, judge):
    folder = scrubber_dir(subs)
    task = shipped_task(TASK)
    rows = rows_of(folder)
    row = next(r for r in rows if r["status"] == "judged")
    pad = " " + "lorem ipsum " * (REJUDGE_CHARS_PER_TOKEN * task.generation.max_tokens // 12 + 1) + "end"
    for key in ("output", "raw_output"):
        if isinstance(row.get(key), str):
            row[key] += pad
    rewrite(folder, rows=rows)
    rescored(folder)
    assert verify_submission(folder).ok, verify_submission(folder).problems  # within the file bounds (32/token)
    out = invoke("leaderboard", "verify", str(folder), expect=1).output
    assert re.search(rf"record {re.escape(row['record_id'])}: output has \d+ characters, over the re-judge's bound of "
                     rf"{REJUDGE_CHARS_PER_TOKEN * task.generation.max_tokens}", out)
    assert judge.calls == []
