"""Attack class *records moved out* (issue 50.3): under strict parsing one off-label judge answer made its record
unparseable, which took it out of the scored set *and* out of the re-judge pool; a run could also pick the parse mode
that did this to the records it liked least. Every record now counts (unparseable answers are failures) and every
recorded answer can be drawn; the parse mode is the task's, pinned by the verifier."""

from __future__ import annotations

import copy

from adversarial_kit import REPO, problems, read_json, rewrite, rows_of

from privasis_bench.leaderboard.families.privasis import parse_mode_problems
from privasis_bench.leaderboard.rejudge import judged_attributes, settings_for
from privasis_bench.protocol.judge_prompts import parse_compare, parse_inclusion
from privasis_bench.protocol.metrics import headline_metrics, scored
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.tasks.registry import load_task

SMOLLM2 = REPO / "submissions" / "HuggingFaceTB__SmolLM2-135M-Instruct" / "privasis_sample"
OFF_LABEL = "tortilla"


def _status(row):
    tiers = [t["tier"] for t in row["targets"]] + [k["via"] for k in row["keep"]]
    return "unjudged" if "unjudged" in tiers else "unparseable" if "unparseable" in tiers else "judged"


def _reparse_strictly(rows):
    """The rows as a strict run records them: an answer that is not one clean label makes its attribute unparseable."""
    rows = copy.deepcopy(rows)
    for row in rows:
        for t in row["targets"]:
            if t["tier"] in ("proximity", "sanitized") and t.get("compare_answer") is not None:
                leak = parse_compare(t["compare_answer"], "strict")
                t["tier"] = "unparseable" if leak is None else "proximity" if leak else "sanitized"
        for k in row["keep"]:
            if k["via"] == "judge" and parse_inclusion(k.get("inclusion_answer"), "strict") is None:
                k.update(via="unparseable", retained=None)
        row["status"] = _status(row)
    return rows


def _clean_labels(rows):
    """A strict run whose judge always answered with one clean label (the honest baseline of the attack)."""
    rows = copy.deepcopy(rows)
    for row in rows:
        for t in row["targets"]:
            if t["tier"] in ("proximity", "sanitized") and t.get("compare_answer") is not None:
                t["compare_answer"] = "response 1" if t["tier"] == "proximity" else "neither"
        for k in row["keep"]:
            if k["via"] == "judge":
                k["inclusion_answer"] = "YES" if k["retained"] else "NO"
    return rows


def _metrics(rows, *, old_rule=False):
    verdicts = [RecordVerdict.from_dict(r) for r in rows]
    kept = [v for v in verdicts if v.status == "judged"] if old_rule else scored(verdicts)
    return len(kept), headline_metrics(kept)


def test_one_off_label_answer_per_worst_record_no_longer_raises_the_numbers():
    """The issue's first reproduction, on the seeded SmolLM2 rows: one answer of each worst record rewritten
    off-label. Under the old rule those records left the scored set (San. Attr up); now they stay, and the rewritten
    answers are in the re-judge pool."""
    honest = _reparse_strictly(_clean_labels(rows_of(SMOLLM2)))
    n, before = _metrics(honest)
    assert n == 5
    forged, rewritten = copy.deepcopy(honest), []

    def share_sanitized(row):
        judged = [t for t in row["targets"] if t["tier"] != "null"]
        return sum(t["tier"] == "sanitized" for t in judged) / max(1, len(judged))

    worst = sorted((r for r in forged if any(t["tier"] == "proximity" for t in r["targets"])), key=share_sanitized)
    for row in worst[:2]:  # the worst records with a judge-decided leak: rewrite that one answer each
        leak = next(t for t in row["targets"] if t["tier"] == "proximity")
        leak.update(compare_answer=OFF_LABEL, tier="unparseable")
        row["status"] = _status(row)
        rewritten.append((row["record_id"], leak["name"]))
    assert len(rewritten) == 2
    _, old = _metrics(forged, old_rule=True)
    assert old["sanitization_attribute"] > before["sanitization_attribute"]  # the gap: worst records dropped
    n_now, now = _metrics(forged)
    assert n_now == 5 and now == before  # every record counts; an unreadable answer is no success
    pool = {(rid, name) for _, rid, role, name in judged_attributes(forged) if role == "target"}
    assert set(rewritten) <= pool


def test_a_strict_reparse_of_the_seeded_entry_keeps_every_record_and_every_answer_in_the_pool():
    """The issue's second reproduction: re-parsing the seeded SmolLM2 entry strictly left a pool of 0 and Ret. Attr
    100.00 on one record. Now all five records stay scored and every judge-decided attribute can be drawn."""
    rows = rows_of(SMOLLM2)
    strict = _reparse_strictly(rows)
    assert sum(r["status"] == "judged" for r in strict) < len(strict)  # the strict reading makes records unparseable
    n_old, old = _metrics(strict, old_rule=True)
    n_now, now = _metrics(strict)
    assert n_now == len(rows) and n_now > n_old
    assert now["retention_attribute"] < 100.0
    assert len(judged_attributes(strict)) == len(judged_attributes(rows)) > 0
    assert {kind for kind, *_ in judged_attributes(strict)} >= {"target:unparseable", "keep:unparseable"}


def test_the_parse_mode_is_the_tasks_and_the_verifier_refuses_another(tmp_path):
    """A run that records --parse-mode strict on a task pinning official is refused; the re-judge reads answers in the
    task's mode whatever the results say."""
    task = load_task("privasis_sample")
    assert task.judge.parse_mode == "official"
    assert parse_mode_problems(task, {"parse_mode": "official", "judge": {"parse_mode": "official"}}) == []
    assert len(parse_mode_problems(task, {"parse_mode": "strict", "judge": {"parse_mode": "strict"}})) == 2
    assert settings_for(task, {"parse_mode": "strict", "judge": {}}).parse_mode == "official"
    import shutil

    folder = shutil.copytree(SMOLLM2, tmp_path / "HuggingFaceTB__SmolLM2-135M-Instruct" / "privasis_sample")
    res, sub = read_json(folder / "results.json"), read_json(folder / "submission.json")
    res["parse_mode"] = res["judge"]["parse_mode"] = sub["parse_mode"] = "strict"
    rewrite(folder, results=res, rows=_reparse_strictly(rows_of(folder)), sub=sub)
    assert any("pins 'official'" in p for p in problems(folder))
