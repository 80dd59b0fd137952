"""The replacement-quality family on the shared board: the committed seeded entries verify; a forged number, row,
span or recorded estimator is refused; rows from different estimators are never ranked together; the board shows
the frontier and the paper's Table 3 apart, never ranked."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "adversarial"))

from adversarial_kit import REPO, read_json, rewrite, rows_of  # noqa: E402

from privasis_bench.leaderboard.family_api import family_of  # noqa: E402
from privasis_bench.leaderboard.rows import rank_rows  # noqa: E402
from privasis_bench.leaderboard.verify import verify_paths, verify_submission  # noqa: E402
from privasis_bench.replacement.summary import estimator_key, summarize_rows  # noqa: E402
from privasis_bench.tasks.family import FAMILIES  # noqa: E402

TASK = "tab_replacement_sample"


def entry(root: Path, name: str = "baselines__identity") -> Path:
    """A fresh copy of a committed replacement entry under ``root/<name>/tab_replacement_sample``."""
    import shutil

    return Path(shutil.copytree(REPO / "submissions" / name / TASK, root / name / TASK))


def _repooled(rows: list[dict], results: dict) -> dict:
    """What a forger writes into results.json so that its numbers agree with its (edited) rows."""
    boot = results["metrics"]["bootstrap"]
    return summarize_rows(rows, results["metrics"], bootstrap_samples=boot["samples"], seed=boot["seed"],
                          confidence=boot["confidence"])


def test_the_family_is_registered_on_the_shared_path():
    fam = FAMILIES.get("tab_replacement")
    assert family_of({"scorer": {"name": "tab_replacement"}}) is fam
    assert fam.verifier and fam.board.rank_by == (("trir", "lower"), ("tps", "higher"))
    assert {"trir", "tps", "nmi", "token_recall"} <= {k for k, _ in fam.board.columns}


@pytest.mark.parametrize("name", ["baselines__identity", "microsoft__presidio-mask"])
def test_the_committed_entries_verify(name, committed_verdicts):
    (v,) = [v for v in committed_verdicts if v.path.resolve() == (REPO / "submissions" / name / TASK).resolve()]
    assert v.ok, v.problems
    assert v.family == "tab_replacement" and v.family_facts["scored_records"] == 10
    assert v.family_facts["estimator_key"] == v.results["metrics"]["estimator_key"]


def test_a_forged_metric_is_refused_and_float_noise_is_not(tmp_path):
    folder = entry(tmp_path)
    res = read_json(folder / "results.json")
    noisy = copy.deepcopy(res)
    noisy["metrics"]["tps"] += 1e-8  # float32 embedding noise between machines: the same number
    rewrite(folder, results=noisy)
    assert verify_submission(folder).problems == []
    forged = copy.deepcopy(res)
    forged["metrics"]["trir"] = 0.1
    forged["metrics"]["ci"]["tps"]["low"] -= 1e-3
    rewrite(folder, results=forged)
    got = verify_submission(folder).problems
    assert any("metrics.trir" in p for p in got) and any("metrics.ci.tps.low" in p for p in got)


def test_forged_rows_with_matching_pooled_numbers_are_refused(tmp_path):
    """A forger who edits the per-document guesses and TPS and re-pools results.json to agree is still caught:
    every row is re-derived from its output."""
    folder = entry(tmp_path)
    res, rows = read_json(folder / "results.json"), rows_of(folder)
    for row in rows:
        row.update(reidentified=False, trir_guess="someone-else", tps=0.99)
    res["metrics"] = {**_repooled(rows, res), "estimator_key": res["metrics"]["estimator_key"]}
    rewrite(folder, results=res, rows=rows)
    got = verify_submission(folder).problems
    assert any("reidentified is False, but its output gives True" in p for p in got)
    assert any(": tps is 0.99" in p for p in got)


def test_a_span_maskers_forged_spans_are_refused(tmp_path):
    folder = entry(tmp_path, "microsoft__presidio-mask")
    rows = rows_of(folder)
    victim = next(r for r in rows if r.get("masked_spans"))
    victim["masked_spans"] = [[s[0] + 1, s[1] + 1] for s in victim["masked_spans"]]
    rewrite(folder, rows=rows)
    assert any(f"document {victim['id']}:" in p for p in verify_submission(folder).problems)


def test_a_wrong_estimator_recorded_is_refused(tmp_path):
    """The entry says its information content came from BERT (and carries that description's key): the verifier
    loads the task's estimators itself and refuses the record."""
    folder = entry(tmp_path)
    res = read_json(folder / "results.json")
    res["scorer"]["information_content"] = {"name": "mlm:bert-base-uncased/N=6", "model": "bert-base-uncased"}
    res["metrics"]["estimator_key"] = estimator_key(res["scorer"])
    rewrite(folder, results=res)
    got = verify_submission(folder).problems
    assert any("scorer.information_content.name is 'mlm:bert-base-uncased/N=6'" in p for p in got)
    assert any("metrics.estimator_key" in p for p in got)


def test_an_estimator_key_of_its_own_is_refused(tmp_path):
    folder = entry(tmp_path)
    res = read_json(folder / "results.json")
    res["metrics"]["estimator_key"] = "0123456789abcdef"
    rewrite(folder, results=res)
    assert any("metrics.estimator_key" in p for p in verify_submission(folder).problems)


def _row(name: str, trir: float, tps: float, key: str) -> dict:
    return {"family": "tab_replacement", "name": name, "task": TASK, "track": "self-reported", "record_set": "r",
            "records": 10, "partial": False, "rankable": True, "trir": trir, "tps": tps, "estimator_key": key}


def test_numbers_from_different_estimators_are_never_ranked_together():
    rows = rank_rows([_row("a", 20.0, 90.0, "k1"), _row("b", 10.0, 80.0, "k2"), _row("c", 20.0, 95.0, "k1"),
                      _row("d", 5.0, 50.0, "k1")])
    by = {r["name"]: r for r in rows}
    assert by["b"]["group"] != by["a"]["group"] == by["c"]["group"] == by["d"]["group"]
    assert by["b"]["frontier"] is True and by["b"]["dominated_by"] == []  # alone with its estimators
    # within one estimator group: no single rank (TRIR and TPS pull apart), the frontier instead
    assert all(r["rank"] is None for r in rows)
    assert by["d"]["frontier"] and by["c"]["frontier"] and by["a"]["dominated_by"] == ["c"]


def test_one_entrys_outputs_under_two_tasks_are_its_own_and_another_names_copy_is_not(tmp_path):
    from adversarial_kit import entry_as

    own = [entry(tmp_path), Path(__import__("shutil").copytree(REPO / "submissions" / "baselines__identity" / "tab_sample",
                                                              tmp_path / "baselines__identity" / "tab_sample"))]
    assert all(v.ok for v in verify_paths([tmp_path])), [v.problems for v in verify_paths([tmp_path])]
    entry_as(tmp_path, "baselines__identity", TASK, "someone/identity-copy", owner="someone")
    outcomes = {v.path: v for v in verify_paths([tmp_path])}
    copy_folder = tmp_path / "someone__identity-copy" / TASK
    assert any("a copy of another entry's outputs" in p for p in outcomes[copy_folder].problems)
    assert own[0] in outcomes


def test_the_board_shows_the_scatter_and_table3_apart(tmp_path):
    from privasis_bench.leaderboard.build import build_board

    subs = tmp_path / "submissions"
    for name in ("baselines__identity", "microsoft__presidio-mask"):
        entry(subs, name)
    files = build_board(subs, tmp_path / "board")
    board = json.loads(files.json.read_text(encoding="utf-8"))
    rows = [e for e in board["entries"] if e["family"] == "tab_replacement"]
    assert len(rows) == 2 and len({r["group"] for r in rows}) == 1
    assert all(r["estimator_key"] and "wordfreq" in r["estimators"] and r["trir_attacker"] == "retrieval" for r in rows)
    assert all(r["trir"] is not None and r["tps_low"] is not None and r["nmi_low"] is None for r in rows)
    html = files.html.read_text(encoding="utf-8")
    assert "Replacement quality: the measures and the published figures" in html
    assert "svg class=\"chart frontier\"" in html and "TRIR ↓ (lower is better)" in html
    assert "As published: Table 3" in html and "Mistral INTACT" in html
    assert not any(e.get("name") == "Mistral INTACT" for e in board["entries"])  # shown apart, never a ranked row
    readme = files.markdown.read_text(encoding="utf-8")
    assert "Replacement quality as published" in readme and "| Suppression | 77.7 | 30.2 | 11.0 |" in readme
