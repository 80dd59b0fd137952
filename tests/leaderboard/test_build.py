"""``leaderboard build``: only verified submissions, byte-identical rebuilds, the paper kept apart; ``view``."""

from __future__ import annotations

import json
import re

from leaderboard_fakes import TASK, PinnedNameJudge, fresh_copy, invoke

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.adapters.base import ChatResult
from privasis_bench.data.loading import load_records
from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.rejudge import judged_attributes, rejudge, settings_for
from privasis_bench.leaderboard.viewer import highlight, render_viewer
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.tasks.registry import load_task


def _snapshot(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_build_twice_is_byte_identical_and_ranks_verified_entries(made, tmp_path):
    subs = fresh_copy(made["submissions"], tmp_path / "submissions")
    out = tmp_path / "board"
    build_board(subs, out)
    first = _snapshot(out)
    invoke("leaderboard", "build", "--submissions-dir", str(subs), "-o", str(out))
    assert _snapshot(out) == first
    # One board for every family: no separate TAB files.
    pages = {"privasis.json", "README.md", "index.html", "board.js",
             f"view/baselines__identity__{TASK}.html", f"view/baselines__regex-scrubber__{TASK}.html"}
    assert pages <= set(first)
    downloads = set(first) - pages  # each entry's tables and EEE record, and the family's tables
    tracks = {e["name"].split("/")[1]: e["track"] for e in json.loads(first["privasis.json"])["entries"]}
    assert {f"data/baselines__{n}__{TASK}/{f}" for n in ("identity", "regex-scrubber")
            for f in ("metrics.csv", "metrics.json") + (("eee.json", "eee_samples.jsonl") if tracks[n] == "verified"
                                                         else ())} | {
        "data/family-privasis.csv", "data/family-privasis.json"} == downloads
    board = json.loads(first["privasis.json"])
    sample = [e for e in board["entries"] if e["task"] == TASK]
    for group in {e["group"] for e in sample}:  # best first within each comparable group
        scores = [e["full_successful_record"] for e in sample if e["group"] == group]
        assert scores == sorted(scores, reverse=True)
    res = json.loads((subs / "baselines__regex-scrubber" / TASK / "results.json").read_text())
    scrub = next(e for e in sample if e["name"] == "baselines/regex-scrubber")
    assert scrub["full_successful_record"] == res["metrics"]["headline"]["full_successful_record"]
    assert scrub["full_successful_record_low"] == res["metrics"]["ci"]["full_successful_record"]["low"]
    assert {e["task"] for e in board["entries"]} == {TASK}  # one task per entry: no "overall" row repeating it
    html = first["index.html"].decode()
    assert "http://" not in html and "https://" not in html
    assert html.count("<script") == 1 and "<script src=\"board.js\"></script>" in html  # the page's one script
    assert "script-src 'self'" in html and "unsafe-inline" not in html.split("script-src", 1)[1].split(";")[0]
    # the paper's numbers live only in their own labelled section
    board_part, paper_part = html.split("Reported in the paper, not reproduced here", 1)
    assert "70.25" in paper_part and "Privasis-Cleaner-4B" not in board_part
    assert "Privasis-Cleaner-4B" not in first["README.md"].decode()
    assert all(e["name"] in first["README.md"].decode() for e in board["entries"])


def test_a_rejected_submission_stays_off_the_board(made, tmp_path):
    subs = fresh_copy(made["submissions"], tmp_path / "submissions")
    res_path = subs / "baselines__identity" / TASK / "results.json"
    res_path.write_text(res_path.read_text().replace('"scored_records": 27', '"scored_records": 28'))
    files = build_board(subs, tmp_path / "board")
    board = json.loads(files.json.read_text())
    assert {e["name"] for e in board["entries"]} == {"baselines/regex-scrubber"}
    assert board["rejected"] == [{"path": f"baselines__identity/{TASK}", "problems": 2}]
    assert "Rejected submissions" in files.markdown.read_text()


def test_viewer_shows_texts_tiers_and_answers(made, tmp_path):
    run = made["runs"] / "scrubber" / TASK
    page = render_viewer(run)
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    prox = next(t for r in rows for t in r.get("targets", []) if t["tier"] == "proximity")
    assert "proximity leak" in page and "class='t-proximity'" in page and prox["compare_answer"] in page
    assert page.count("<article ") == len(rows)
    assert "original text unavailable" not in page
    invoke("view", str(made["runs"] / "scrubber"), "-o", str(tmp_path / "pages"))
    assert (tmp_path / "pages" / f"{TASK}.html").read_text() == page


def test_highlight_escapes_and_marks_every_occurrence():
    html = highlight("Ana <b> met ANA", [("ana", "t-direct", "target name"), (None, "x", "y")])
    assert html == ("<mark class='t-direct' title='target name'>Ana</mark> &lt;b&gt; met "
                    "<mark class='t-direct' title='target name'>ANA</mark>")


def test_rejudge_reports_agreement(made, tmp_path, monkeypatch):
    """The stand-in judge answers from the prompt alone, so re-asking it agrees; a judge saying YES to all does not."""
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: PinnedNameJudge(spec.model))
    folder = fresh_copy(made["submissions"] / "baselines__regex-scrubber", tmp_path / "baselines__regex-scrubber") / TASK
    out = invoke("leaderboard", "verify", str(folder), "--rejudge", "6", "--judge", "llamacpp:smollm2", "--seed", "3").output
    assert re.search(r"rejudge with llamacpp:smollm2: (\d+)/\1 agree \(100\.0%\)", out)  # >= 6: each kind drawn
    rows = [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]
    task = load_task(TASK)
    pool = judged_attributes(rows)
    results = json.loads((folder / "results.json").read_text())
    got = rejudge(rows, {r.id: r for r in load_records(task).records}, settings_for(task, results), n=len(pool), seed=0,
                  max_disagreements=0, runner=lambda reqs: [ChatResult(text="YES") for _ in reqs],
                  prompts=JudgePrompts.load(task.judge.templates))
    assert got.asked == len(pool) and 0 < got.agreed < got.asked and not got.passed
    assert got.disagreements[0].startswith("record ") and "re-asked judge gives" in got.disagreements[0]


def test_word_diff_marks_removed_and_added_words():
    from privasis_bench.leaderboard.viewer import word_diff

    html = word_diff("Ana Lopez visited <Oslo> on Monday.", "[NAME] visited <Oslo> on Monday.")
    assert html == "<del>Ana Lopez</del><ins>[NAME]</ins> visited &lt;Oslo&gt; on Monday."


def test_viewer_shows_the_instruction_the_model_was_given(made):
    page = render_viewer(made["runs"] / "scrubber" / TASK)
    rows = [json.loads(line) for line in (made["runs"] / "scrubber" / TASK / "samples.jsonl").read_text().splitlines()]
    record = next(r for r in load_records(load_task(TASK)).records if r.id == rows[0]["record_id"])
    assert "Instruction <span class='sub'>(base)</span>" in page
    from html import escape
    assert escape(record.base_instruction) in page and "toggle-diff" in page


def test_the_board_says_what_kind_of_system_a_shipped_tool_is():
    from privasis_bench.leaderboard.build import system_description

    assert "NER-based" in system_description({"spec": {"provider": "spacy-ner", "model": "", "args": {}}})
    assert "rule-based" in system_description({"spec": "datafog"})
    assert system_description({"spec": {"provider": "openai", "model": "gpt-4.1"}}) is None
    assert system_description({"spec": 7}) is None and system_description(None) is None


def test_the_boards_viewer_pages_show_the_verifiers_numbers_not_the_submitted_ones(made, tmp_path, monkeypatch):
    """Issue 50.4: a board's viewer page prints the recomputed headline (here made to differ from results.json's
    to tell the two apart); ``view`` on a run folder still prints the run's own numbers."""
    import privasis_bench.leaderboard.build as build_mod

    real = build_mod.verify_paths

    def verified_then_changed(*args, **kwargs):
        found = real(*args, **kwargs)
        for v in found:
            if v.ok:
                v.recomputed["headline"]["full_successful_record"] = 12.3456
        return found

    monkeypatch.setattr(build_mod, "verify_paths", verified_then_changed)
    subs = fresh_copy(made["submissions"], tmp_path / "submissions")
    files = build_board(subs, tmp_path / "board")
    page = (tmp_path / "board" / "view" / f"baselines__regex-scrubber__{TASK}.html").read_text()
    submitted = json.loads((subs / "baselines__regex-scrubber" / TASK / "results.json").read_text())
    assert "full successful record 12.35" in page and "recomputed by the verifier" in page
    assert submitted["metrics"]["headline"]["full_successful_record"] != 12.3456
    assert len(files.viewers) == 2
    own = render_viewer(subs / "baselines__regex-scrubber" / TASK)
    assert "full successful record 12.35" not in own and "recomputed by the verifier" not in own
