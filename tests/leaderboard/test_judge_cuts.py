"""Cut judge answers are counted from the samples rows (``cut_answers``) and checked against results.json."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from leaderboard_fakes import TASK, PinnedNameJudge, fresh_copy, invoke

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.judge_cuts import recorded_usage, row_cuts
from privasis_bench.leaderboard.provenance import sha256_file
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.verify import verify_submission
from privasis_bench.results.files import dumps_json
from privasis_bench.results.rescore import rescore_task


class CuttingJudge(PinnedNameJudge):
    """The pinned judge's stand-in, with about a third of its answers ending at the token budget."""

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        result = await super().agenerate(request)
        cut = hashlib.sha256(request.messages[0][1].encode()).digest()[1] % 3 == 0
        return ChatResult(text=result.text, finish_reason="length" if cut else "stop", usage=Usage(10, 2))


def _run(base: Path, name: str) -> Path:
    invoke("run", "-m", "regex-scrubber", "--judge", "llamacpp:smollm2", "-t", TASK, "--no-progress", "--limit", "8",
           "-o", str(base / "runs" / name), "--cache-dir", str(base / "cache"), "--max-off-label", "100000")
    (folder,) = submit_run(base / "runs" / name, f"cuts/{name}", track="verified", root=base / "submissions")
    return folder


@pytest.fixture(scope="module")
def cut_runs(tmp_path_factory):
    """Two verified entries judged by the cutting judge: the first pays for every answer, the second (same outputs,
    same cache) gets every answer from the cache."""
    base = tmp_path_factory.mktemp("cuts")
    mp = pytest.MonkeyPatch()
    original = runner_mod.build_adapter
    try:
        mp.setattr(runner_mod, "build_adapter",
                   lambda spec: CuttingJudge(spec.model) if spec.provider == "llamacpp" else original(spec))
        yield {"fresh": _run(base, "fresh"), "cached": _run(base, "cached")}
    finally:
        mp.undo()


def _rows(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]


def _write(folder: Path, rows: list[dict] | None = None, results: dict | None = None) -> None:
    """Rewrite files and every hash, as a careful forger does."""
    if rows is not None:
        (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if results is not None:
        (folder / "results.json").write_text(dumps_json(results))
    sub = json.loads((folder / "submission.json").read_text())
    sub["files"] = {name: sha256_file(folder / name) for name in sub["files"]}
    (folder / "submission.json").write_text(dumps_json(sub))


def _copy(folder: Path, tmp_path: Path) -> Path:
    return fresh_copy(folder.parent, tmp_path / folder.parent.name) / folder.name


def test_cut_judge_answers_are_derived_from_the_rows_and_equal_the_recorded_count(cut_runs):
    folder = cut_runs["fresh"]
    results = json.loads((folder / "results.json").read_text())
    usage = recorded_usage(results)
    assert usage.cached == 0 and usage.truncated > 0  # every answer paid for once: the exact case
    v = verify_submission(folder)
    assert v.ok, v.problems
    assert v.counts.cut_judge_answers == usage.truncated == row_cuts(_rows(folder)).flagged
    assert f"{usage.truncated} judge answer(s) cut at the token budget" in v.facts()["tolerated"]
    again = rescore_task(folder.parent.parent.parent / "runs" / "fresh" / TASK)  # rescore reads the new field
    assert again.matches and not again.contradictions


def test_answers_from_the_cache_count_in_every_row_that_records_them(cut_runs, tmp_path):
    folder = cut_runs["cached"]
    usage = recorded_usage(json.loads((folder / "results.json").read_text()))
    assert usage.truncated == 0 and usage.cached == usage.asked > 0  # nothing paid for, nothing cut by this run
    v = verify_submission(folder)
    assert v.ok, v.problems
    assert v.counts.cut_judge_answers == row_cuts(_rows(cut_runs["fresh"])).flagged > 0
    subs = tmp_path / "submissions"  # the two entries have the same rows: on one board, both would be rejected
    fresh_copy(folder.parent, subs / folder.parent.name)
    (row,) = json.loads(build_board(subs, tmp_path / "board").json.read_text())["entries"]
    assert row["cut_judge_answers"] == v.counts.cut_judge_answers


def _copy_hiding_cuts(source, tmp_path):
    """A copy of ``source`` and its rows with every cut_answers emptied (rows not yet written back)."""
    folder = _copy(source, tmp_path)
    rows = _rows(folder)
    for row in rows:
        for item in [*row["targets"], *row["keep"]]:
            item["cut_answers"] = []
    return folder, rows


def test_rows_that_hide_their_cut_answers_are_rejected(cut_runs, tmp_path):
    folder, rows = _copy_hiding_cuts(cut_runs["fresh"], tmp_path)
    _write(folder, rows=rows)
    truncated = recorded_usage(json.loads((folder / "results.json").read_text())).truncated
    problems = verify_submission(folder).problems
    assert problems == [f"{folder / 'results.json'}: usage.judge.truncated is {truncated} but samples.jsonl flags 0 cut "
                        "judge answer(s) in cut_answers (every answer was a fresh call recorded once, so the two must "
                        "be equal)"]


def test_hidden_cut_answers_are_caught_unless_the_run_asked_that_many_more_questions(cut_runs, tmp_path):
    folder, rows = _copy_hiding_cuts(cut_runs["fresh"], tmp_path)
    results = json.loads((folder / "results.json").read_text())
    judge = results["usage_cumulative"]["total"]["usage"]["judge"]
    judge["cached"], judge["asked"] = 1, judge["asked"] + 1  # no longer the exact case
    _write(folder, rows=rows, results=results)
    assert any("flags only 0 cut judge answer(s)" in p and "asked 1 question(s) more" in p
               for p in verify_submission(folder).problems)
    judge["asked"] += judge["truncated"]  # claims as many unrecorded questions as cut answers: the documented limit
    _write(folder, results=results)
    v = verify_submission(folder)
    assert v.ok and v.counts.cut_judge_answers == 0


def test_rows_without_the_field_are_refused_naming_the_record(cut_runs, tmp_path):
    # issue 41: dropping the field ("the rows predate it") no longer switches the check off
    folder = _copy(cut_runs["fresh"], tmp_path)
    rows = _rows(folder)
    for row in rows:
        for item in [*row["targets"], *row["keep"]]:
            item.pop("cut_answers")
    _write(folder, rows=rows)
    problems = verify_submission(folder).problems
    judged = next(r for r in rows if any(t.get("guess") is not None for t in r["targets"]))
    name = next(t["name"] for t in judged["targets"] if t.get("guess") is not None)
    assert f"{folder / 'samples.jsonl'}: record {judged['record_id']} target:{name}: records judge answers but no " \
           "cut_answers" in "\n".join(problems)


def test_a_flag_must_name_an_answer_its_entry_records(cut_runs, tmp_path):
    folder = _copy(cut_runs["fresh"], tmp_path)
    rows = _rows(folder)
    direct = next((r, t) for r in rows for t in r["targets"] if t["tier"] == "direct" or t["guess"] is None)
    direct[1]["cut_answers"] = ["guess"]
    _write(folder, rows=rows)
    problems = verify_submission(folder).problems
    assert any(f"record {direct[0]['record_id']} target:{direct[1]['name']}: cut_answers names guess, not an answer"
               in p for p in problems)
    direct[1]["cut_answers"] = ["everything"]
    _write(folder, rows=rows)
    assert any("cut_answers" in p and "schema samples-row-1" in p for p in verify_submission(folder).problems)


def test_the_shipped_submissions_count_their_cut_answers_from_the_rows(committed_verdicts):
    outcomes = committed_verdicts
    assert outcomes and all(v.ok for v in outcomes), {str(v.path): v.problems for v in outcomes if not v.ok}
    for v in (v for v in outcomes if v.family == "privasis"):  # judged entries (TAB has no judge) were judged
        # after the field existed: every row says
        rows = [json.loads(line) for line in (v.path / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
        flagged = sum(len(e.get("cut_answers") or []) for r in rows for e in (*r.get("targets", []), *r.get("keep", [])))
        assert v.counts.cut_judge_answers == flagged, v.path
    assert any(v.counts and v.counts.cut_judge_answers for v in outcomes)  # the SmolLM2 judge does run into its budgets
