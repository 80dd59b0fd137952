"""The board people read: tracks apart, ranks only among comparable rows, escaped Markdown, all-or-nothing builds,
a rebuild check, an entry without a label, cumulative cut counts, gold-reading baselines never ranked."""

from __future__ import annotations

import copy
import json
import re
from types import SimpleNamespace

import pytest
from leaderboard_fakes import TASK, fresh_copy, invoke

import privasis_bench.leaderboard.build as build_mod
from privasis_bench.leaderboard.build import board_rows, build_board, check_board
from privasis_bench.leaderboard.families.privasis_row import cut_counts, entry_row, reads_gold
from privasis_bench.leaderboard.markdown import md_cell, md_table
from privasis_bench.leaderboard.rows import rank_rows
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.verify import verify_paths

NASTY = "evil | <img src=x onerror=alert(1)> `code` [link](https://x.example) www.x.example **b** &amp;\nsecond line"


def _snapshot(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_md_cell_escapes_every_markup_character_and_keeps_one_line():
    cell = md_cell(NASTY)
    assert "\n" not in cell and _unescaped_pipes(cell) == 0
    assert re.search(r"(?<!\\)[<>`\[\]|&*_]", cell) is None  # every markup character escaped
    assert "www\\.x" in cell and "https\\://" in cell  # no bare autolink
    assert cell.startswith("evil \\| \\<img") and "\\`code\\`" in cell and "\\[link\\]" in cell
    assert md_cell(None) == ""
    table = md_table(["a|b", "c"], [[NASTY, 1]]).splitlines()
    assert len(table) == 3 and {_unescaped_pipes(line) for line in table} == {3}


def test_entry_without_label_and_a_hostile_label_build(made, tmp_path):
    subs = tmp_path / "subs"
    submit_run(made["runs"] / "identity", "plain/no-label", track="self-reported", root=subs)
    submit_run(made["runs"] / "scrubber", "org/model", track="verified", label=NASTY, root=subs)
    files = build_board(subs, tmp_path / "board")
    board = json.loads(files.json.read_text())
    plain = next(e for e in board["entries"] if e["name"] == "plain/no-label")
    assert plain["label"] is None
    md = files.markdown.read_text()
    board_part = md.split("## Per entry, across tasks")[0]  # the cross-task table has columns of its own
    rows = [line for line in board_part.splitlines() if line.startswith("| ")]
    assert len({_unescaped_pipes(line) for line in rows}) == 1  # no cell adds a column
    cross = [line for line in md.split("## Per entry, across tasks")[1].splitlines() if line.startswith("| ")]
    assert cross and len({_unescaped_pipes(line) for line in cross}) == 1
    assert re.search(r"(?<!\\)<img", md) is None and "\\<img" in md
    html = files.html.read_text()
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_verified_and_self_reported_are_separate_ranked_tables(made, tmp_path):
    files = build_board(fresh_copy(made["submissions"], tmp_path / "subs"), tmp_path / "board")
    board = json.loads(files.json.read_text())
    by_name = {e["name"]: e for e in board["entries"]}
    assert by_name["baselines/regex-scrubber"]["group"] != by_name["baselines/identity"]["group"]
    assert by_name["baselines/regex-scrubber"]["rank"] == 1
    # identity changes nothing: a degenerate baseline, listed apart with its reason and never ranked
    assert by_name["baselines/identity"]["rank"] is None and "changes nothing" in by_name["baselines/identity"]["degenerate"]
    assert [e["track"] for e in board["entries"]] == ["verified", "self-reported"]
    md = files.markdown.read_text()
    assert md.index("verified (re-judged)") < md.index("self-reported (not re-judged)")
    html = files.html.read_text()
    assert "Self-reported: not re-judged" in html and html.count("<table class='board'>") == 2
    assert "../submissions/README.md" in html and "privasis.json" in html and "../docs/publishing.md" in html
    assert {k: v for k, v in board["built"].items() if k != "downloads"} == {"date": build_mod.build_date([v for v in verify_paths([tmp_path / "subs"]) if v.ok]),
                              "harness_version": build_mod.__version__}
    assert re.match(r"\d{4}-\d\d-\d\d$", board["built"]["date"]) and board["built"]["date"] in html
    assert "Failures by record category" not in html  # the near-100% heat-map is gone


def test_partial_runs_rank_apart_and_gold_readers_never_rank(made, tmp_path, monkeypatch):
    from leaderboard_fakes import PinnedNameJudge

    import privasis_bench.pipeline.run as runner_mod

    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: PinnedNameJudge(spec.model) if spec.provider == "llamacpp" else real(spec))
    common = ("--tasks", TASK, "--no-progress", "--cache-dir", str(tmp_path / "cache"))
    invoke("run", "-m", "identity", "--judge", "none", "--limit", "4", "-o", str(tmp_path / "runs/part"), *common)
    invoke("run", "-m", "mask-targets", "--judge", "none", "-o", str(tmp_path / "runs/gold"), *common)
    subs = fresh_copy(made["submissions"], tmp_path / "subs")
    submit_run(tmp_path / "runs/part", "org/identity-prefix", track="self-reported", root=subs)
    submit_run(tmp_path / "runs/gold", "reference/mask-targets", track="self-reported", reference=True, root=subs)
    accepted = [v for v in verify_paths([subs]) if v.ok]
    assert len(accepted) == 4
    rows = board_rows(accepted, {})
    by_name = {r["name"]: r for r in rows}
    full, part, gold = by_name["baselines/identity"], by_name["org/identity-prefix"], by_name["reference/mask-targets"]
    assert part["partial"] and not full["partial"] and part["group"] != full["group"]
    assert part["rank"] is None and full["rank"] is None  # identity is degenerate: never ranked, in either group
    assert part["degenerate"] and full["degenerate"]
    assert gold["gold_reading"] and gold["rank"] is None and gold["group"] == full["group"]
    assert rows.index(gold) < rows.index(full)  # degenerate baselines are listed apart, after every other row
    # a gold-reading baseline marked rankable by hand still never ranks: decided from the model spec
    v = next(x for x in accepted if x.submission["name"] == "reference/mask-targets")
    forged = copy.deepcopy(v)
    for data in (forged.results, forged.submission):
        data["model"]["rankable"] = True
    forged.submission["reference"] = False
    assert reads_gold(forged.results["model"])
    (row,) = rank_rows([entry_row(forged, TASK, forged.results["metrics"], None)])
    assert row["rank"] is None and row["gold_reading"]
    files = build_board(subs, tmp_path / "board")
    md = files.markdown.read_text()
    assert "partial runs: 4 of 29 records" in md and "reads gold labels, never ranked" in md


def test_cut_counts_are_cumulative_over_resumes(made, tmp_path):
    (v,) = [x for x in verify_paths([fresh_copy(made["submissions"], tmp_path / "subs")]) if x.ok
            and x.submission["track"] == "verified"]
    v.results["usage"] = {"judge": {"truncated": 0}, "model": {"truncated": 0}}
    v.results["usage_cumulative"] = {"total": {"usage": {"judge": {"truncated": 18}, "model": {"truncated": 2}}}}
    v.results["counts"]["truncated_outputs"] = 2
    c = v.counts  # rows without per-record cut fields: the run's own (cumulative) counts are the source
    v.counts = SimpleNamespace(failed_outputs=c.failed_outputs, unjudged=c.unjudged, off_label=c.off_label)
    assert cut_counts(v) == (2, 18)
    row = entry_row(v, TASK, v.results["metrics"], None)
    assert row["cut_judge_answers"] == 18 and row["cut_model_outputs"] == 2
    assert "judge answers cut at the token budget: 18" in row["tolerated"]
    assert "model outputs cut at the token budget: 2" in row["tolerated"]


def test_build_is_all_or_nothing_and_keeps_other_files(made, tmp_path, monkeypatch):
    subs = fresh_copy(made["submissions"], tmp_path / "subs")
    out = tmp_path / "board"
    build_board(subs, out)
    (out / "seed_board.sh").write_text("#!/bin/sh\n")
    before = _snapshot(out)

    def boom(*args, **kwargs):
        raise RuntimeError("disk full while writing index.html")

    monkeypatch.setattr(build_mod, "render_board", boom)
    submit_run(made["runs"] / "identity", "new/entry", track="self-reported", root=subs)
    with pytest.raises(RuntimeError):
        build_board(subs, out)
    assert _snapshot(out) == before  # privasis.json and README.md were staged, never half-published
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board", "subs"]  # no staging directory left behind
    monkeypatch.undo()
    build_board(subs, out)
    after = _snapshot(out)
    assert after["seed_board.sh"] == b"#!/bin/sh\n"
    assert b"new__entry" in after["privasis.json"] and b"new\\_\\_entry" in after["README.md"]  # (a copy: rejected)


def test_check_board_names_every_difference(made, tmp_path):
    subs = fresh_copy(made["submissions"], tmp_path / "subs")
    out = tmp_path / "board"
    build_board(subs, out)
    (out / "seed_board.sh").write_text("kept\n")
    assert check_board(subs, out) == []
    invoke("leaderboard", "build", "--submissions-dir", str(subs), "-o", str(out), "--check")
    readme = out / "README.md"
    readme.write_text(readme.read_text().replace("baselines/identity", "baselines/identity-1"))
    (out / "view" / "extra.html").write_text("<script>alert(1)</script>")
    (out / "index.html").unlink()
    assert check_board(subs, out) == [f"{out / 'index.html'}: missing (the rebuild writes it)",
                                      f"{out / 'view/extra.html'}: not written by the build (remove it)",
                                      f"{out / 'README.md'}: differs from the rebuild"]
    result = invoke("leaderboard", "build", "--submissions-dir", str(subs), "-o", str(out), "--check", expect=1)
    assert "differs from a rebuild" in result.output
    build_board(subs, out)
    assert check_board(subs, out) == []


def test_check_board_sees_a_new_submission(made, tmp_path):
    subs = fresh_copy(made["submissions"], tmp_path / "subs")
    build_board(subs, tmp_path / "board")
    submit_run(made["runs"] / "identity", "late/comer", track="self-reported", root=subs)
    problems = check_board(subs, tmp_path / "board")
    assert f"{tmp_path / 'board' / 'privasis.json'}: differs from the rebuild" in problems
    assert f"{tmp_path / 'board' / 'README.md'}: differs from the rebuild" in problems


def test_viewer_highlight_and_diff_stay_correct_on_long_outputs():
    from privasis_bench.leaderboard.viewer import DIFF_BUDGET, highlight, word_diff

    marks = [("Ana Lopez", "t-direct", "name"), ("Ana", "t-inference", "first"), ("Lopez visited", "x", "overlap")]
    html = highlight("Ana Lopez visited Ana. " * 3, marks)
    assert html.count("<mark class='t-direct'") == 3 and html.count("<mark class='t-inference'") == 3
    assert "class='x'" not in html  # overlaps an earlier mark: the first mark wins
    long_text = "Ana met Bo. " * 20000
    assert highlight(long_text, marks).count("<mark") == 20000
    original = " ".join(f"a{i}" for i in range(2000))
    unrelated = " ".join(f"b{i}" for i in range(2000))
    assert 2000 * 2000 > DIFF_BUDGET
    diff = word_diff("Same start " + original + " same end.", "Same start " + unrelated + " same end.")
    assert diff.startswith("Same start <del>a0 ") and diff.endswith("</ins> same end.")
    assert diff.count("<del>") == 1 and diff.count("<ins>") == 1


def test_cut_outputs_from_per_record_fields_win():
    from privasis_bench.leaderboard.verify import Verified

    v = Verified(path=None, submission={}, results={"counts": {"truncated_outputs": 0}, "usage": {}},
                 counts=SimpleNamespace(failed_outputs=0, unjudged=0, off_label=0, cut_outputs=3))
    assert cut_counts(v) == (3, 0)


def test_cut_judge_answers_survive_a_resume_end_to_end(tmp_path, monkeypatch):
    """A judge that cuts some answers; the run is repeated (every verdict reused, so that invocation cuts none): the
    board still shows every cut answer of the run, not the last invocation's zero."""
    import hashlib

    from leaderboard_fakes import ANSWERS, PinnedNameJudge

    import privasis_bench.pipeline.run as runner_mod
    from privasis_bench.adapters.base import ChatResult, Usage

    class CuttingJudge(PinnedNameJudge):
        async def agenerate(self, request):
            digest = hashlib.sha256(request.messages[0][1].encode()).digest()
            return ChatResult(text=ANSWERS[digest[0] % len(ANSWERS)], usage=Usage(10, 2),
                              finish_reason="length" if digest[1] % 4 == 0 else "stop")

    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: CuttingJudge(spec.model) if spec.provider == "llamacpp" else real(spec))
    argv = ["run", "-m", "regex-scrubber", "--judge", "llamacpp:smollm2", "-o", str(tmp_path / "run"), "--tasks", TASK,
            "--no-progress", "--cache-dir", str(tmp_path / "cache"), "--max-off-label",
            "100000", "--judge-truncated-answers", "accept", "--limit", "6"]
    invoke(*argv)
    first = json.loads((tmp_path / "run" / TASK / "results.json").read_text())
    cut = first["usage"]["judge"]["truncated"]
    assert cut > 0
    invoke(*argv)  # the same command again: a resume that reuses every verdict
    again = json.loads((tmp_path / "run" / TASK / "results.json").read_text())
    assert again["usage"]["judge"]["truncated"] == 0  # the last invocation alone would show none
    submit_run(tmp_path / "run", "org/cutting", track="verified", root=tmp_path / "subs")
    files = build_board(tmp_path / "subs", tmp_path / "board")
    (entry,) = json.loads(files.json.read_text())["entries"]
    assert entry["cut_judge_answers"] == cut
    assert f"judge answers cut at the token budget: {cut}" in files.markdown.read_text()
