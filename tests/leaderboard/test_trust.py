"""Issue 21: a leaderboard nobody can game. Each forgery is built here and must be rejected with a line naming it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_main import run_main
from leaderboard_fakes import TASK, PinnedNameJudge, invoke
from leaderboard_fakes import identity_dir as _identity
from leaderboard_fakes import scrubber_dir as _scrubber

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.leaderboard.build import board_table, build_board
from privasis_bench.leaderboard.provenance import sha256_file
from privasis_bench.leaderboard.verify import verify_paths, verify_submission
from privasis_bench.results.files import dumps_json
from privasis_bench.results.rescore import rescore_task


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _rows(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]


def _write(folder: Path, rows: list[dict] | None = None, results: dict | None = None, sub: dict | None = None) -> None:
    """Write edited files and make the hashes in submission.json match (what a careful forger does)."""
    if rows is not None:
        (folder / "samples.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    if results is not None:
        (folder / "results.json").write_text(dumps_json(results))
    sub = sub if sub is not None else _json(folder / "submission.json")
    sub["files"] = {name: sha256_file(folder / name) for name in sub["files"]}
    (folder / "submission.json").write_text(dumps_json(sub))



def test_publish_after_an_outage(tmp_path, monkeypatch, capsys, request):
    """A run against a dead endpoint is refused; the same run scored as empty is accepted and labelled on the board."""
    common = ["-t", TASK, "--judge", "none", "--no-progress", "--limit", "3", "--max-attempts", "1",
              "--cache-dir", str(tmp_path / "cache")]
    from fake_openai_server import Action, FakeOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    # a server that answers HTTP 500 to every call (one refusing connections from the start stops the run at once)
    outage = FakeOpenAIServer(script=lambda p, n: Action("500")).__enter__()
    request.addfinalizer(lambda: outage.__exit__(None, None, None))
    dead = f"base_url={outage.base_url},timeout=2"
    code, _, _ = run_main(["run", "-m", "openai:gpt-x", "--model-args", dead, "-o", str(tmp_path / "dead"), *common],
                          monkeypatch, capsys)
    assert code == 1 and _json(tmp_path / "dead" / TASK / "results.json")["complete"] is False
    code, out, err = run_main(["submit", str(tmp_path / "dead"), "--name", "org/dead", "--submissions-dir",
                               str(tmp_path / "subs")], monkeypatch, capsys)
    assert code == 2 and "refusing an unfinished run (3 failed model output(s)" in err and "--score-failed-as-empty" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "subs").exists()

    code, _, _ = run_main(["run", "-m", "openai:gpt-x", "--model-args", dead, "-o", str(tmp_path / "empty"), *common,
                           "--score-failed-as-empty"], monkeypatch, capsys)
    assert code == 0
    code, _, err = run_main(["submit", str(tmp_path / "empty"), "--name", "org/dead", "--submissions-dir",
                             str(tmp_path / "subs")], monkeypatch, capsys)
    assert code == 0, err
    published = (tmp_path / "subs" / "org__dead" / TASK)
    assert "127.0.0.1" not in (published / "submission.json").read_text() + (published / "results.json").read_text()
    build_board(tmp_path / "subs", tmp_path / "board")
    (entry,) = json.loads((tmp_path / "board" / "privasis.json").read_text())["entries"]
    assert entry["failed_outputs"] == 3 and "failed outputs scored as empty" in entry["marks"]
    assert "failed outputs scored as empty" in (tmp_path / "board" / "index.html").read_text()


def test_a_submission_claiming_more_than_its_samples_hold_is_rejected(subs):
    folder = _identity(subs)
    rows = _rows(folder)
    rows[0].update(output=None, output_failed=True, output_error="HTTP 500")  # a failed output, results still say complete
    for t in rows[0]["targets"]:
        t["tier"] = "sanitized" if t["value"] is not None else "null"
    for k in rows[0]["keep"]:
        k.update(via="empty_output", retained=False) if k["value"] is not None else k.update(via="null", retained=None)
    _write(folder, rows=rows)
    problems = verify_submission(folder).problems
    assert any("results.json: counts.failed_outputs is 0 but samples.jsonl holds 1" in p for p in problems), problems
    assert any("complete is True but samples.jsonl gives False" in p for p in problems)


def test_forged_judge_answers_are_caught(subs):
    folder = _scrubber(subs)
    rows = _rows(folder)
    target = next(t for r in rows for t in r["targets"] if t.get("compare_answer_raw") and t["tier"] == "proximity")
    target.update(compare_answer="neither", tier="sanitized")  # verdict and cleaned answer agree; the raw answer does not
    _write(folder, rows=rows)
    problems = verify_submission(folder).problems
    assert any("compare_answer is 'neither' but cleaning the recorded compare_answer_raw gives" in p for p in problems)


def test_consistently_forged_answers_fail_the_rejudge(subs, monkeypatch):
    """Raw and cleaned answers rewritten together pass every file check; the pinned judge, re-asked, disagrees."""
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: PinnedNameJudge(spec.model))
    folder = _scrubber(subs)
    rows = _rows(folder)
    for row in rows:
        for k in row.get("keep") or []:
            if k["via"] == "judge":
                k.update(inclusion_answer="YES", inclusion_answer_raw="YES", retained=True)
        for t in row.get("targets") or []:
            if t["tier"] == "proximity":
                t.update(compare_answer="neither", compare_answer_raw="neither", tier="sanitized")
    _write(folder, rows=rows)
    outcome = rescore_task(folder)
    res = _json(folder / "results.json")
    res["metrics"] = outcome.results["metrics"]
    from privasis_bench.leaderboard.claims import derive_counts
    res["counts"]["off_label"] = derive_counts(_rows(folder)).off_label
    _write(folder, results=res)
    assert verify_submission(folder).ok  # structurally consistent
    out = invoke("leaderboard", "verify", str(folder), expect=1).output  # the default re-judge of the verified track
    assert "firm disagreement(s)" in out and "FAIL" in out


def test_an_honest_verified_submission_passes_the_default_rejudge(subs, monkeypatch):
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: PinnedNameJudge(spec.model))
    out = invoke("leaderboard", "verify", str(_scrubber(subs))).output  # verified track: re-judged by default
    asked = re.search(r"rejudge with llamacpp:smollm2: (\d+)/\1 agree \(100\.0%\) of (\d+) judged attributes", out)
    assert asked and int(asked.group(1)) >= 29 and "1 verified, 0 rejected" in out  # the error model's 29, per kind


def test_rescore_write_refuses_a_submission_folder(subs, monkeypatch, capsys):
    code, _, err = run_main(["rescore", str(_identity(subs)), "--write"], monkeypatch, capsys)
    assert code == 2 and "is a submission folder; rescore --write only rewrites local runs" in err


def test_claims_cross_checked(subs):
    folder = _identity(subs)
    sub = _json(folder / "submission.json")
    sub["harness"]["version"] = "99.0.0"
    sub["dates"]["run_started"] = "2031-01-01T00:00:00+00:00"
    sub["judge"]["spec"] = {"provider": "openai", "model": "x", "args": {"base_url": "http://10.0.0.5:8000/v1"}}
    _write(folder, sub=sub)
    problems = verify_submission(folder).problems
    assert any("harness.version 99.0.0 is newer than this verifier" in p for p in problems)
    assert any("dates are out of order" in p for p in problems)
    assert any("submission.json: judge.spec.args holds transport argument(s) base_url" in p for p in problems)


def test_custom_judge_prompts_are_marked_on_the_self_reported_track(subs):
    folder = _identity(subs)  # self-reported, judge none: no mark
    assert board_table(verify_paths([subs]), {}).loc[lambda f: f["name"] == "baselines/identity", "marks"].iloc[0] == []
    scrub = _scrubber(subs)
    for name in ("results.json", "submission.json"):
        data = _json(scrub / name)
        data["judge"]["prompt_hashes"]["compare"] = "f" * 64
        data["track"] = "self-reported" if name == "submission.json" else data.get("track")
        if name == "results.json":
            data.pop("track", None)
        (scrub / name).write_text(dumps_json(data))
    _write(scrub)
    frame = board_table([v for v in verify_paths([subs]) if v.ok], {})
    assert "custom judge prompts" in frame.loc[frame["name"] == "baselines/regex-scrubber", "marks"].iloc[0]
    assert folder.exists()


def test_overall_only_for_entries_with_several_tasks_and_never_more_records(subs):
    accepted = [v for v in verify_paths([subs]) if v.ok]
    assert "overall" not in set(board_table(accepted, {})["task"])
    ident = next(v for v in accepted if v.submission["name"] == "baselines/identity")
    twin = type(ident)(ident.path, {**ident.submission, "task": {**ident.submission["task"], "name": "privasis_other"}},
                       ident.results, [], ident.counts, recomputed=ident.recomputed)
    frame = board_table([ident, twin], {})
    overall = frame[frame["task"] == "overall"]
    assert len(overall) == 1 and overall["records"].iloc[0] == 2 * ident.results["metrics"]["scored_records"]


def test_verify_a_file_and_build_an_empty_directory_are_one_line_errors(subs, tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["leaderboard", "verify", str(_identity(subs) / "results.json")], monkeypatch, capsys)
    assert code == 2 and "is a file; pass a submission folder" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "runs_only" / "run" / TASK).mkdir(parents=True)
    code, _, err = run_main(["leaderboard", "build", "--submissions-dir", str(tmp_path / "runs_only"), "-o",
                             str(tmp_path / "board")], monkeypatch, capsys)
    assert code == 2 and "no submission found under" in err and not (tmp_path / "board").exists()


def test_a_non_shipped_testee_prompt_is_marked_on_the_board(subs):
    ident = next(v for v in verify_paths([subs]) if v.submission["name"] == "baselines/identity")
    assert "custom testee prompt" not in board_table([ident], {})["marks"].iloc[0]
    custom = type(ident)(ident.path, ident.submission,
                         {**ident.results, "testee_prompt": {"template": {"name": "mine.txt", "sha256": "0" * 64},
                                                             "template_sha256": "0" * 64, "answer_cue": "Answer:",
                                                             "shipped": False}}, [], ident.counts,
                         recomputed=ident.recomputed)
    assert "custom testee prompt" in board_table([custom], {})["marks"].iloc[0]
