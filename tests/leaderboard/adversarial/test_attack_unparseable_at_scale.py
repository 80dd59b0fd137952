"""Attack class *records moved out* (issue 50.3) at the issue's own scale: one judge answer rewritten off-label in
each of the 10 worst records of a whole run (the 29-record sample task, 27 scored, run through the harness with a
stand-in for the pinned judge), so that strict parsing would make those records unparseable. Whatever the forger
does with the numbers and the parse mode, the verifier either refuses the entry or scores it on the same records
as the honest run, with numbers no better than the honest run's."""

from __future__ import annotations

import copy

import pytest
from attack_tools import read_json, rescored, rewrite, rows_of
from leaderboard_fakes import TASK, scrubber_dir

from privasis_bench.leaderboard.verify import verify_submission
from privasis_bench.protocol.metrics import headline_metrics
from privasis_bench.protocol.verdicts import RecordVerdict

OFF_LABEL = "tortilla"
WORST = 10


def _share_sanitized(row: dict) -> float:
    judged = [t for t in row["targets"] if t["tier"] != "null"]
    return sum(t["tier"] == "sanitized" for t in judged) / max(1, len(judged))


def _answerable(row: dict) -> dict | None:
    """The one judge answer of a record the forger rewrites: a judge-decided leak, else a judge-decided keep."""
    leak = next((t for t in row["targets"] if t["tier"] == "proximity" and t.get("compare_answer") is not None), None)
    if leak is not None:
        return leak
    return next((k for k in row["keep"] if k["via"] == "judge" and k.get("inclusion_answer") is not None), None)


def _forge(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """One answer of each of the 10 worst records rewritten off-label, with the verdicts a strict parse gives."""
    rows = copy.deepcopy(rows)
    worst = sorted((r for r in rows if r.get("status") != "excluded" and _answerable(r) is not None),
                   key=lambda r: (_share_sanitized(r), r["record_id"]))[:WORST]
    for row in worst:
        item = _answerable(row)
        if "compare_answer" in item:
            item.update(compare_answer=OFF_LABEL, compare_answer_raw=OFF_LABEL, tier="unparseable")
        else:
            item.update(inclusion_answer=OFF_LABEL, inclusion_answer_raw=OFF_LABEL, via="unparseable", retained=None)
        row["status"] = "unparseable"
    return rows, [r["record_id"] for r in worst]


def _old_rule_numbers(res: dict, rows: list[dict]) -> dict:
    """results.json as the issue's forger wrote it: the unparseable records left out of the scored set."""
    kept = [RecordVerdict.from_dict(r) for r in rows if r.get("status") == "judged"]
    res = copy.deepcopy(res)
    res["metrics"]["headline"] = headline_metrics(kept)
    res["metrics"]["scored_records"] = len(kept)
    return res


@pytest.fixture
def honest(subs):  # noqa: F811 (fixture)
    folder = scrubber_dir(subs)
    v = verify_submission(folder)
    assert v.ok, v.problems
    return folder, v


def _strict(folder, res=None):
    res, sub = res or read_json(folder / "results.json"), read_json(folder / "submission.json")
    res["parse_mode"] = res["judge"]["parse_mode"] = sub["parse_mode"] = "strict"
    return res, sub


def test_the_seeded_run_has_the_issues_scale(honest):
    folder, v = honest
    rows = rows_of(folder)
    assert len(rows) >= 27 and v.recomputed["scored_records"] >= 27
    _, rewritten = _forge(rows)
    assert len(rewritten) == WORST


@pytest.mark.parametrize("parse_mode", ["official", "strict"])
def test_the_issues_forgery_with_its_numbers_is_refused(honest, parse_mode):
    """The forger drops the 10 records from the scored set (the old rule) and claims the better numbers."""
    folder, v = honest
    rows, _ = _forge(rows_of(folder))
    res = _old_rule_numbers(read_json(folder / "results.json"), rows)
    assert res["metrics"]["headline"]["sanitization_attribute"] > v.recomputed["headline"]["sanitization_attribute"]
    sub = None
    if parse_mode == "strict":
        res, sub = _strict(folder, res)
    rewrite(folder, rows=rows, results=res, sub=sub)
    problems = verify_submission(folder).problems
    assert problems, "the forged entry was accepted"


@pytest.mark.parametrize("parse_mode", ["official", "strict"])
def test_honestly_rescored_the_forgery_keeps_every_record_and_gains_nothing(honest, parse_mode):
    """The forger lets the harness rescore the rewritten rows: refused, or ranked on the same 27 records with
    numbers no better than the honest run's."""
    folder, v = honest
    before = v.recomputed
    rows, rewritten = _forge(rows_of(folder))
    rewrite(folder, rows=rows)
    rescored(folder)
    if parse_mode == "strict":
        res, sub = _strict(folder)
        rewrite(folder, results=res, sub=sub)
    after = verify_submission(folder)
    if after.ok:
        assert after.recomputed["scored_records"] == before["scored_records"]
        for key in ("sanitization_attribute", "sanitization_record", "full_successful_record"):
            assert after.recomputed["headline"][key] <= before["headline"][key], key
    else:
        assert any(rid in p for p in after.problems for rid in rewritten) or any("pins" in p for p in after.problems), \
            after.problems


def test_answers_rewritten_the_way_the_pinned_mode_reads_them_stay_in_the_pool_and_the_rejudge_refuses_them(honest):
    """The forger's last move: keep the task's parse mode and record the verdicts it gives for the rewritten answers
    (official reading takes the junk answer as "no leak"). Nothing static can tell; the entry keeps all 27 records,
    every rewritten answer stays drawable, and re-asking the judge (here the run's own stand-in) about the pool
    disagrees on each decision the rewrite turned."""
    import hashlib

    from leaderboard_fakes import ANSWERS

    from privasis_bench.adapters.base import ChatResult
    from privasis_bench.data.loading import load_records
    from privasis_bench.leaderboard.rejudge import judged_attributes, rejudge, settings_for
    from privasis_bench.protocol.judge_prompts import JudgePrompts, parse_compare, parse_inclusion
    from privasis_bench.tasks.registry import load_task

    folder, v = honest
    rows = rows_of(folder)
    worst = sorted((r for r in rows if r.get("status") != "excluded" and _answerable(r) is not None),
                   key=lambda r: (_share_sanitized(r), r["record_id"]))[:WORST]
    rewritten, changed = [], 0  # changed: decisions the rewrite turned (the others read the same either way)
    for row in worst:
        item = _answerable(row)
        if "compare_answer" in item:
            leak = parse_compare(OFF_LABEL, "official")
            changed += item["tier"] != ("proximity" if leak else "sanitized")
            item.update(compare_answer=OFF_LABEL, compare_answer_raw=OFF_LABEL, tier="proximity" if leak else "sanitized")
            rewritten.append((row["record_id"], "target", item["name"]))
        else:
            changed += item["retained"] != parse_inclusion(OFF_LABEL, "official")
            item.update(inclusion_answer=OFF_LABEL, inclusion_answer_raw=OFF_LABEL,
                        retained=parse_inclusion(OFF_LABEL, "official"))
            rewritten.append((row["record_id"], "keep", item["name"]))
    assert len(rewritten) == WORST and changed > 2
    rewrite(folder, rows=rows)
    rescored(folder)
    after = verify_submission(folder)
    assert after.ok, after.problems  # consistent with the pinned reading: no static check can object
    assert after.recomputed["scored_records"] == v.recomputed["scored_records"] >= 27
    pool = judged_attributes(rows_of(folder))
    assert set(rewritten) <= {(rid, role, name) for _, rid, role, name in pool}

    def the_judge(requests):  # the stand-in judge the run was made with: the same answer for the same prompt
        return [ChatResult(text=ANSWERS[hashlib.sha256(r.messages[0][1].encode()).digest()[0] % len(ANSWERS)])
                for r in requests]

    task = load_task(TASK)
    got = rejudge(rows_of(folder), {r.id: r for r in load_records(task).records},
                  settings_for(task, read_json(folder / "results.json")), n=len(pool), seed=0, max_disagreements=2,
                  runner=the_judge, prompts=JudgePrompts.load(task.judge.templates))
    assert got.asked == len(pool) and got.asked - got.agreed == changed and not got.passed  # 2 allowed
