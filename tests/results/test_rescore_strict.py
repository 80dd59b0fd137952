"""Issue 42: `rescore` holds results.json and samples.jsonl to what `leaderboard verify` checks on the same files."""

from __future__ import annotations

import json

import pytest
from cli_main import run_main

from privasis_bench.leaderboard.judge_cuts import flag_problems
from privasis_bench.protocol.row_checks import answer_cleaning_problems, cut_flag_problems

RUN = ["run", "-m", "identity", "--judge", "none", "--no-progress", "--bootstrap-samples", "20", "-t", "privasis_sample",
       "--limit", "3"]


@pytest.fixture
def task_dir(tmp_path, monkeypatch, capsys):
    code, _, err = run_main([*RUN, "-o", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0, err
    return tmp_path / "run" / "privasis_sample"


def _edit_rows(task_dir, edit):
    path = task_dir / "samples.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    judged = next(r for r in rows if r["status"] == "judged")
    edit(judged)
    path.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("tamper, fragment", [
    (lambda t: (t / "results.json").write_text((t / "results.json").read_text().replace(
        '"scored": 3', '"scored": 1e999')), "out of range"),
    (lambda t: _edit_rows(t, lambda r: r.update(record_id=r["record_id"] + "\ud800")), "lone surrogate"),
    (lambda t: _edit_rows(t, lambda r: r["keep"][0].update(cut_answers=["guess"])), "cut_answers names guess"),
    (lambda t: _edit_rows(t, lambda r: r["targets"][0].update(cut_answers=["bogus", "bogus"])), "names an answer twice"),
    (lambda t: _edit_rows(t, lambda r: r["targets"][0].update(cut_answers="guess")), "must be a list"),
    (lambda t: (t / "results.json").write_text((t / "results.json").read_text().replace('"scored": 3', '"scored": 4')),
     "counts.scored"),
], ids=["scored 1e999", "lone surrogate id", "cut_answers not recorded", "cut_answers twice", "cut_answers a string",
        "scored 4"])
def test_rescore_refuses_what_verify_refuses(task_dir, tamper, fragment, monkeypatch, capsys):
    assert '"scored": 3' in (task_dir / "results.json").read_text()
    tamper(task_dir)
    code, out, err = run_main(["rescore", str(task_dir)], monkeypatch, capsys)
    assert code in (1, 2) and fragment in " ".join((out + err).split()), out + err
    assert "Traceback" not in err
    before = (task_dir / "results.json").read_bytes()
    code, out, err = run_main(["rescore", str(task_dir), "--write"], monkeypatch, capsys)
    assert code == 2 and fragment in err, out + err
    assert (task_dir / "results.json").read_bytes() == before  # nothing written


ROWS = [
    {"record_id": "a", "status": "judged",
     "targets": [{"name": "t", "guess": "x", "guess_raw": "<think>.</think> X", "compare_answer": None,
                  "cut_answers": ["guess"]},
                 {"name": "u", "guess": "y", "guess_raw": "Z", "cut_answers": ["compare_answer", "guess", "guess"]}],
     "keep": [{"name": "k", "guess": None, "inclusion_answer": "YES", "inclusion_answer_raw": "assistant YES",
               "cut_answers": ["inclusion_answer"]},
              {"name": "m", "guess": "Q", "inclusion_answer": None, "cut_answers": ["bogus"]}]},
]


def test_the_shared_row_checks_find_what_the_verifiers_copies_find():
    """The leaderboard's verifier uses the shared answer-cleaning check itself; its cut-flag check is the shared one, strict."""
    assert cut_flag_problems(ROWS) == flag_problems(ROWS)
    assert len(cut_flag_problems(ROWS)) == 3
    assert len(answer_cleaning_problems(ROWS)) == 2  # "y" is not the cleaning of "Z"; "Q" is not lower-cased


@pytest.mark.parametrize("tamper,fragment", [
    (lambda rows: rows[0].update(id=rows[0]["id"] + "X"), "is not in task tab_sample's data"),
    (lambda rows: rows[1].update(id=rows[0]["id"]), "appears a second time"),
])
def test_rescore_of_a_tab_run_refuses_document_ids_the_data_does_not_hold(tmp_path, monkeypatch, capsys, tamper, fragment):
    code, out, err = run_main(["run", "-m", "identity", "-t", "tab_sample", "--no-progress", "--no-cache",
                               "--bootstrap-samples", "20", "-o", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0, out + err
    path = tmp_path / "run" / "tab_sample" / "samples.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    code, out, err = run_main(["rescore", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0 and fragment not in out + err, out + err  # the untouched run is clean
    tamper(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = run_main(["rescore", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 1 and fragment in out + err, out + err
