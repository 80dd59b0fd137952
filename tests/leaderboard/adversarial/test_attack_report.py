"""Attack class *report*: a committed re-judge agreement that claims what the verifier never checked.

The committed report (``leaderboards/rejudge.json``) may hold an agreement only for an entry the verifier actually
re-asks; every verified entry must be in it; a failed check never overwrites it; and the README's publish flow
(submit -> verify --report -> build) carries the submitter's own verify to the board.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from attack_tools import read_json
from leaderboard_fakes import TASK, PinnedNameJudge, invoke

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.rejudge_report import ReportError
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.results.files import dumps_json

SCRUBBER, IDENTITY, OWN = "baselines/regex-scrubber", "baselines/identity", "forger/own-prompts"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def pinned_judge(monkeypatch):
    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: PinnedNameJudge(spec.model) if spec.provider == "llamacpp" else real(spec))


@pytest.fixture(scope="module")
def board_parts(made, tmp_path_factory):
    """The honest test entries plus a self-reported entry judged with judge prompts of its own (copies of the
    shipped ones: the verifier cannot know that), and a finished partial run not yet submitted."""
    base = tmp_path_factory.mktemp("report-attacks")
    mp = pytest.MonkeyPatch()
    real = runner_mod.build_adapter
    mp.setattr(runner_mod, "build_adapter",
               lambda spec: PinnedNameJudge(spec.model) if spec.provider == "llamacpp" else real(spec))
    try:
        prompts = base / "prompts"
        prompts.mkdir()
        for key, path in shipped_task(TASK).judge.templates.model_dump().items():
            shutil.copy(path, prompts / f"{key}.txt")
        common = ("-t", TASK, "--no-progress", "--cache-dir", str(base / "cache"), "--max-off-label", "100000")
        invoke("run", "-m", "regex-scrubber", "--judge", "llamacpp:smollm2", "--judge-prompts", str(prompts),
               "--limit", "7", "-o", str(base / "runs/own"), *common)
        invoke("run", "-m", "regex-scrubber", "--judge", "llamacpp:smollm2", "--limit", "5",
               "-o", str(base / "runs/new"), *common)
        subs = base / "submissions"
        shutil.copytree(made["submissions"], subs)
        submit_run(base / "runs/own", OWN, track="self-reported", root=subs)
        yield {"submissions": subs, "new_run": base / "runs/new"}
    finally:
        mp.undo()


@pytest.fixture
def subs(board_parts, tmp_path) -> Path:
    return Path(shutil.copytree(board_parts["submissions"], tmp_path / "submissions"))


def _report(subs: Path, path: Path) -> dict:
    invoke("leaderboard", "verify", str(subs), "--seed", "7", "--report", str(path))
    return read_json(path)


def _entry(report: dict, name: str) -> dict:
    return next(e for e in report["entries"] if e["name"] == name)


def _edit(path: Path, edit) -> bytes:
    data = read_json(path)
    edit(data)
    path.write_text(dumps_json(data))
    return path.read_bytes()


def test_an_entry_with_its_own_judge_prompts_cannot_carry_an_agreement(subs, tmp_path):
    out = tmp_path / "board"
    out.mkdir()
    path = out / "rejudge.json"
    report = _report(subs, path)
    assert _entry(report, OWN)["custom_inputs"] == ["judge prompts"] and _entry(report, OWN)["agreement"] is None
    forged = dict(_entry(report, SCRUBBER)["agreement"])
    _edit(path, lambda d: _entry(d, OWN).update(agreement=forged))  # "re-judged by llamacpp:smollm2: all agree"
    text = invoke("leaderboard", "verify", str(subs), "--check-report", str(path), expect=1).output
    assert f"FAIL {path}: {OWN} on {TASK}: the report holds a re-judge agreement, but the entry uses judge prompts " \
           "of its own, which the verifier cannot re-ask" in text
    with pytest.raises(ReportError, match="uses judge prompts of its own, which the verifier cannot re-ask"):
        build_board(subs, out)


def test_the_board_says_why_an_entry_shows_no_agreement(subs, tmp_path):
    out = tmp_path / "board"
    out.mkdir()
    _report(subs, out / "rejudge.json")
    build_board(subs, out)
    rows = {e["name"]: e for e in read_json(out / "privasis.json")["entries"]}
    assert rows[OWN]["rejudge_agreement"] is None
    assert rows[OWN]["rejudge_note"] == "not re-judged: uses judge prompts of its own, which the verifier cannot re-ask"
    assert rows[IDENTITY]["rejudge_note"] == "not re-judged: self-reported track"
    assert rows[SCRUBBER]["rejudge_note"] is None and rows[SCRUBBER]["rejudge_agreement"]["judge"] == "llamacpp:smollm2"
    page = (out / "index.html").read_text()
    assert "not re-judged: uses judge prompts of its own" in page and "not re-judged: self-reported track" in page
    assert "not re-judged: uses judge prompts of its own" in (out / "README.md").read_text()


@pytest.mark.parametrize("left_out", [SCRUBBER, IDENTITY, OWN])
def test_every_verified_entry_must_be_in_the_report(subs, tmp_path, left_out):
    path = tmp_path / "rejudge.json"
    _report(subs, path)
    _edit(path, lambda d: d["entries"].remove(_entry(d, left_out)))
    text = invoke("leaderboard", "verify", str(subs), "--check-report", str(path), expect=1).output
    assert f"FAIL {path}: {left_out} on {TASK} (" in text and "passed verify but is not in the report" in text


def test_a_verified_entry_whose_agreement_was_removed_fails_the_check(subs, tmp_path):
    path = tmp_path / "rejudge.json"
    _report(subs, path)
    _edit(path, lambda d: _entry(d, SCRUBBER).update(agreement=None))
    text = invoke("leaderboard", "verify", str(subs), "--check-report", str(path), expect=1).output
    assert f"FAIL {path}: {SCRUBBER} on {TASK}: the report holds no re-judge agreement for a verified-track entry" in text


@pytest.mark.parametrize("why", ["tampered report", "rejected entry"])
def test_a_failed_check_never_overwrites_the_committed_report(subs, tmp_path, why):
    path = tmp_path / "rejudge.json"
    _report(subs, path)
    if why == "tampered report":
        before = _edit(path, lambda d: _entry(d, SCRUBBER)["agreement"].update(pool=_entry(d, SCRUBBER)["agreement"]["pool"] + 1))
    else:
        before = path.read_bytes()
        (subs / "baselines__identity" / TASK / "samples.jsonl").write_text("{broken\n")
    text = invoke("leaderboard", "verify", str(subs), "--check-report", str(path), "--report", str(path), expect=1).output
    assert path.read_bytes() == before
    assert f"{path}: not written (an entry or the report check failed); the existing file is kept" in text


def test_the_readme_flow_carries_the_submitters_verify_to_the_board(board_parts, subs, tmp_path, monkeypatch):
    # the maintainer's committed report covers the board; a submitter adds an entry, verifies it with --report,
    # builds: the new entry's agreement is on the board and every other entry keeps its own
    monkeypatch.chdir(tmp_path)
    shutil.move(str(subs), "submissions")
    Path("leaderboards").mkdir()
    committed = _report(Path("submissions"), Path("leaderboards/rejudge.json"))
    submit_run(board_parts["new_run"], "my-org/my-model", track="verified", root=Path("submissions"))
    invoke("leaderboard", "verify", "submissions/my-org__my-model", "--report", "leaderboards/rejudge.json")
    invoke("leaderboard", "build")
    rows = {e["name"]: e for e in read_json(Path("leaderboards/privasis.json"))["entries"]}
    mine = rows["my-org/my-model"]["rejudge_agreement"]
    assert mine and mine["judge"] == "llamacpp:smollm2" and mine["seed"] != 7 and mine["passed"]
    assert rows[SCRUBBER]["rejudge_agreement"] == _entry(committed, SCRUBBER)["agreement"]  # kept, with seed 7
    assert "re-judged by llamacpp:smollm2 (seed" in Path("leaderboards/index.html").read_text()
    # the merged report is itself checkable: CI's command passes on it
    invoke("leaderboard", "verify", "submissions", "--check-report", "leaderboards/rejudge.json")
    readme = (ROOT / "README.md").read_text()
    assert "leaderboard verify submissions/my-org__my-model --report leaderboards/rejudge.json" in readme
