"""Attack class *cut answers*: hiding judge answers that were cut at their token budget.

The rows' ``cut_answers`` and results.json's usage are both the submitter's files, so agreeing counts only show that
they are consistent. What the verifier can know: the re-judge compares the answers the pinned judge cuts with each
re-asked row's flags. A missing counter, a missing field or a claimed killed invocation never switches a check off;
what stays self-reported is labelled on the board.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from attack_tools import read_json, rewrite, rows_of
from leaderboard_fakes import TASK, PinnedNameJudge, invoke

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.verify import verify_submission

ALL = "100000"


class CuttingJudge(PinnedNameJudge):
    """The pinned judge's stand-in, with about a third of its answers ending at the token budget."""

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        result = await super().agenerate(request)
        cut = hashlib.sha256(request.messages[0][1].encode()).digest()[1] % 3 == 0
        return ChatResult(text=result.text, finish_reason="length" if cut else "stop", usage=Usage(10, 2))


@pytest.fixture(autouse=True)
def cutting_judge(monkeypatch):
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: CuttingJudge(spec.model))


@pytest.fixture(scope="module")
def cut_entry(tmp_path_factory):
    base = tmp_path_factory.mktemp("cut-attacks")
    mp = pytest.MonkeyPatch()
    real = runner_mod.build_adapter
    mp.setattr(runner_mod, "build_adapter", lambda spec: CuttingJudge(spec.model) if spec.provider == "llamacpp" else real(spec))
    try:
        invoke("run", "-m", "regex-scrubber", "--judge", "llamacpp:smollm2", "-t", TASK, "--no-progress", "--limit", "8",
               "-o", str(base / "runs/cut"), "--cache-dir", str(base / "cache"), "--max-off-label", "100000",
               "--judge-truncated-answers", "accept")
        (folder,) = submit_run(base / "runs/cut", "cuts/entry", track="verified", root=base / "submissions")
        yield folder
    finally:
        mp.undo()


@pytest.fixture
def entry(cut_entry, tmp_path) -> Path:
    copy = Path(shutil.copytree(cut_entry.parent.parent, tmp_path / "submissions"))
    return copy / cut_entry.parent.name / cut_entry.name


def _usages(res: dict) -> list[dict]:
    """Every judge usage block a careful forger edits (the last invocation's and the cumulative one)."""
    blocks = [res["usage"]["judge"], res["usage_cumulative"]["total"]["usage"]["judge"]]
    return blocks + [i["usage"]["judge"] for i in res["usage_cumulative"]["invocations"]]


def _hide_cuts(folder: Path, edit_usage=None) -> int:
    rows = rows_of(folder)
    hidden = sum(len(item["cut_answers"]) for r in rows for item in [*r["targets"], *r.get("keep", [])])
    for r in rows:
        for item in [*r["targets"], *r.get("keep", [])]:
            item["cut_answers"] = []
    res = read_json(folder / "results.json")
    for block in _usages(res):
        block["truncated"] = 0
        if edit_usage:
            edit_usage(block)
    rewrite(folder, rows=rows, results=res)
    return hidden


def test_consistently_hidden_cut_answers_pass_the_files_but_not_the_rejudge(entry):
    assert _hide_cuts(entry) > 0
    assert verify_submission(entry).ok  # rows and usage agree: the files alone cannot tell
    out = invoke("leaderboard", "verify", str(entry), "--rejudge", ALL, expect=1).output
    assert "firm disagreement(s)" in out and "re-asked judge gives" in out and "(cut: " in out


@pytest.mark.parametrize("counter", ["asked", "truncated", "cached", "failed"])
def test_a_removed_usage_counter_is_refused(entry, counter):
    _hide_cuts(entry, lambda block: block.pop(counter))
    problems = verify_submission(entry).problems
    assert any(f"usage.judge.{counter}: missing or not a count" in p for p in problems), problems


def test_rows_that_predate_the_field_are_refused(entry):
    rows = rows_of(entry)
    for r in rows:
        for item in [*r["targets"], *r.get("keep", [])]:
            item.pop("cut_answers", None)
    rewrite(entry, rows=rows)
    assert any("records judge answers but no cut_answers" in p for p in verify_submission(entry).problems)


def test_a_claimed_killed_invocation_must_be_listed_and_never_switches_the_rejudge_off(entry, tmp_path):
    _hide_cuts(entry)
    res = read_json(entry / "results.json")
    res["usage_cumulative"]["total"]["killed_invocations"] = 1  # claimed, but every listed invocation completed
    rewrite(entry, results=res)
    assert any("killed_invocations is 1 but 0 invocation(s) are listed as killed" in p
               for p in verify_submission(entry).problems)
    res["usage_cumulative"]["invocations"][0]["ended"] = "killed"  # now listed as well: the usage is incomplete
    rewrite(entry, results=res)
    assert verify_submission(entry).ok
    out = invoke("leaderboard", "verify", str(entry), "--rejudge", ALL, expect=1).output
    assert "firm disagreement(s)" in out and "(cut: " in out


def test_what_stays_self_reported_is_labelled_on_the_board(entry, tmp_path):
    res = read_json(entry / "results.json")
    res["usage_cumulative"]["total"]["killed_invocations"] = 1
    res["usage_cumulative"]["invocations"][0]["ended"] = "killed"
    rewrite(entry, results=res)
    build_board(entry.parent.parent, tmp_path / "board")
    (row,) = read_json(tmp_path / "board" / "privasis.json")["entries"]
    assert row["self_reported"] == ["cut judge answers: checked only on the re-judged sample",
                                    "judge usage incomplete (1 killed invocation(s)): cut-answer count not confirmed "
                                    "by usage"]
    assert "self-reported: judge usage incomplete" in (tmp_path / "board" / "index.html").read_text()
    assert "self-reported: cut judge answers: checked only on the re-judged sample" in \
        (tmp_path / "board" / "README.md").read_text()
