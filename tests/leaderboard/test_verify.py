"""``submit`` and ``leaderboard verify``: every tampering is rejected with a message naming what differs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leaderboard_fakes import TASK, fresh_copy, invoke
from leaderboard_fakes import identity_dir as _identity
from leaderboard_fakes import scrubber_dir as _scrubber

from privasis_bench.leaderboard.provenance import sha256_file
from privasis_bench.leaderboard.submit import SubmissionError, submit_run
from privasis_bench.leaderboard.verify import verify_paths, verify_submission
from privasis_bench.protocol.metrics import compute_metrics, scored
from privasis_bench.results.files import dumps_json, verdicts_from_rows


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]


def _write_rows(folder: Path, rows: list[dict]) -> None:
    (folder / "samples.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _rehash(folder: Path) -> None:
    """What a careful forger does: make submission.json's file hashes match the edited files."""
    sub = _json(folder / "submission.json")
    sub["files"] = {name: sha256_file(folder / name) for name in sub["files"]}
    (folder / "submission.json").write_text(dumps_json(sub))


def _problems(folder: Path) -> list[str]:
    return verify_submission(folder).problems


def test_untouched_submissions_verify(subs):
    outcomes = verify_paths([subs])
    assert [v.problems for v in outcomes] == [[], []]
    sub = _json(_scrubber(subs) / "submission.json")
    assert sub["track"] == "verified" and sub["judge"]["key"] == "llamacpp:smollm2"
    assert sub["task"]["source_file"] == "privasis_bench:tasks/privasis_sample.yaml"
    tiers = {t["tier"] for r in _rows(_scrubber(subs)) for t in r.get("targets", [])}
    assert {"direct", "proximity", "sanitized"} <= tiers  # the fake judge really decided things
    assert invoke("leaderboard", "verify", str(subs)).output.strip().endswith("2 verified, 0 rejected")


def test_one_metric_edited(subs):
    folder = _scrubber(subs)
    res = _json(folder / "results.json")
    res["metrics"]["headline"]["full_successful_record"] += 3.0
    (folder / "results.json").write_text(dumps_json(res))
    _rehash(folder)
    problems = _problems(folder)
    assert len(problems) == 1 and "metrics.headline.full_successful_record: results.json says" in problems[0]


def test_one_verdict_edited(subs):
    folder = _scrubber(subs)
    rows = _rows(folder)
    row = next(r for r in rows if any(k["via"] == "judge" and not k["retained"] for k in r.get("keep", [])))
    keep = next(k for k in row["keep"] if k["via"] == "judge" and not k["retained"])
    keep["retained"] = True
    _write_rows(folder, rows)
    problems = _problems(folder)
    assert any("sha256 differs from submission.json files.samples.jsonl" in p for p in problems)
    assert any(f"record {row['record_id']} keep:{keep['name']}: retained is True" in p for p in problems)
    assert any("metrics.headline.retention_attribute" in p for p in problems)


def test_verdict_and_results_edited_consistently_are_caught_by_rederivation(subs):
    folder = _scrubber(subs)
    rows = _rows(folder)
    row = next(r for r in rows if any(t["tier"] == "direct" for t in r.get("targets", [])))
    target = next(t for t in row["targets"] if t["tier"] == "direct")
    target["tier"] = "sanitized"  # the value is still in the output text
    _write_rows(folder, rows)
    res = _json(folder / "results.json")
    boot = res["metrics"]["bootstrap"]
    res["metrics"] = json.loads(json.dumps(compute_metrics(
        scored(verdicts_from_rows(rows)), bootstrap_samples=boot["samples"], seed=boot["seed"],
        confidence=boot["confidence"], top_failed=res["metrics"]["top_failed_limit"])))
    (folder / "results.json").write_text(dumps_json(res))
    _rehash(folder)
    problems = _problems(folder)
    assert problems == [f"{folder / 'samples.jsonl'}: record {row['record_id']} target:{target['name']}: tier is "
                        f"'sanitized' but the recorded inputs give 'direct' (the value occurs in the output)"]


def test_judge_spec_changed(subs):
    folder = _scrubber(subs)
    res = _json(folder / "results.json")
    res["judge"]["key"] = "openai:gpt-4.1"
    (folder / "results.json").write_text(dumps_json(res))
    _rehash(folder)
    assert any("judge.key is 'llamacpp:smollm2' but results.json judge.key is 'openai:gpt-4.1'" in p for p in _problems(folder))
    sub = _json(folder / "submission.json")
    sub["judge"]["key"] = "openai:gpt-4.1"
    (folder / "submission.json").write_text(dumps_json(sub))
    assert f"{folder / 'results.json'}: judge is 'openai:gpt-4.1', the verified track pins 'llamacpp:smollm2'" in _problems(folder)


def test_a_record_dropped(subs):
    folder = _identity(subs)
    rows = _rows(folder)
    dropped = rows.pop(3)
    _write_rows(folder, rows)
    _rehash(folder)
    problems = _problems(folder)
    assert f"{folder / 'samples.jsonl'}: record {dropped['record_id']} of the task is missing" in problems
    assert any("metrics.scored_records" in p for p in problems)


@pytest.mark.parametrize("name,needle,kind", [
    ("results.json", "/home/alice/runs/x", "an absolute local path"),
    ("samples.jsonl", "sk-proj-abcdefghijklmnopqrstuv", "an OpenAI-style key"),
    ("submission.json", "hf_abcdefghijklmnopqrstuvwxyz1234", "a Hugging Face token"),
])
def test_absolute_path_or_key_in_any_file(subs, name, needle, kind):
    folder = _identity(subs)
    text = (folder / name).read_text()
    if name == "samples.jsonl":
        text = text.replace('"output": "', f'"output": "{needle} ', 1)
    else:
        text = text.replace('"name": ', f'"note": "{needle}", "name": ', 1)
    (folder / name).write_text(text)
    problems = _problems(folder)
    assert any(str(folder / name) in p and kind in p for p in problems), problems


def test_a_copy_outside_git_rejects_both_entries(subs):
    copy = fresh_copy(_identity(subs), subs / "someone__identity-again" / TASK)
    sub = _json(copy / "submission.json")
    sub["name"] = "someone/identity-again"
    (copy / "submission.json").write_text(dumps_json(sub))
    outcomes = {v.path: v for v in verify_paths([subs])}
    for folder, other in ((copy, _identity(subs)), (_identity(subs), copy)):  # no base branch says who came first
        assert any("the same samples as" in p and str(other) in p for p in outcomes[folder].problems)
    assert invoke("leaderboard", "verify", str(subs), expect=1)


def test_in_git_the_commit_that_added_a_folder_decides_who_came_first(subs):
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=subs, check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin"})

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "genuine entries")
    copy = fresh_copy(_identity(subs), subs / "aaa__early-bird" / TASK)  # sorts first, and backdated
    sub = _json(copy / "submission.json")
    sub["name"] = "aaa/early-bird"
    sub["dates"]["submitted"] = "2001-01-01T00:00:00+00:00"
    (copy / "submission.json").write_text(dumps_json(sub))
    outcomes = {v.path: v for v in verify_paths([subs])}
    assert outcomes[_identity(subs)].ok  # committed on the base branch: it owns its outputs
    assert any("the same samples as" in p and "already on the base branch" in p for p in outcomes[copy].problems)


def test_the_folder_is_derived_from_the_name(subs):
    folder = _identity(subs)
    sub = _json(folder / "submission.json")
    sub["name"] = "org/fake"
    (folder / "submission.json").write_text(dumps_json(sub))
    problems = _problems(folder)
    assert any("name 'org/fake' on task 'privasis_sample' belongs in org__fake/privasis_sample/" in p for p in problems)


def test_one_name_and_task_make_one_entry(subs, tmp_path):
    other = tmp_path / "elsewhere"
    second = fresh_copy(_scrubber(subs), other / "baselines__regex-scrubber" / TASK)
    rows = _rows(second)
    _write_rows(second, rows)  # re-serialized: not a byte copy, still the same name and task
    _rehash(second)
    outcomes = verify_paths([subs, other])
    flagged = [v for v in outcomes if any("is also claimed by" in p for p in v.problems)]
    assert {v.path for v in flagged} == {second, _scrubber(subs)}  # neither is on a base branch: both rejected


def test_submit_refusals(made, tmp_path, monkeypatch):
    runs = made["runs"]
    with pytest.raises(SubmissionError, match="verified track: judge is None"):
        submit_run(runs / "identity", "a/b", track="verified", root=tmp_path)
    with pytest.raises(SubmissionError, match="--name 'nope'"):
        submit_run(runs / "identity", "nope", root=tmp_path)
    task_dir = fresh_copy(runs / "identity" / TASK, tmp_path / "run" / TASK)
    res = _json(task_dir / "results.json")
    res["model"]["rankable"] = False
    (task_dir / "results.json").write_text(dumps_json(res))
    with pytest.raises(SubmissionError, match="reads gold labels"):
        submit_run(tmp_path / "run", "a/b", root=tmp_path / "s")
    assert submit_run(tmp_path / "run", "a/b", reference=True, root=tmp_path / "s")
    res["model"]["rankable"] = True
    res["counts"]["unjudged"] = 2
    (task_dir / "results.json").write_text(dumps_json(res))
    with pytest.raises(SubmissionError, match="refusing an unfinished run \\(2 unjudged record\\(s\\)"):
        submit_run(tmp_path / "run", "a/c", root=tmp_path / "s")
    res["counts"]["unjudged"] = 0
    res["task"]["config_hash"] = "0" * 64
    (task_dir / "results.json").write_text(dumps_json(res))
    with pytest.raises(SubmissionError, match="task.config_hash differs"):
        submit_run(tmp_path / "run", "a/d", root=tmp_path / "s")
    res["task"]["config_hash"] = _json(runs / "identity" / TASK / "results.json")["task"]["config_hash"]
    res["model"]["spec"]["args"] = {"api_key": "sk-live-0123456789abcdefghij"}
    (task_dir / "results.json").write_text(dumps_json(res))
    with pytest.raises(SubmissionError, match="looks like an OpenAI-style key"):
        submit_run(tmp_path / "run", "a/e", root=tmp_path / "s")
    assert not (tmp_path / "s" / "a__e").exists()


def test_schema_violations_name_file_and_field(subs):
    folder = _identity(subs)
    rows = _rows(folder)
    rows[0]["targets"][0]["tier"] = "leaked-a-bit"
    rows[0]["futurefield"] = {"raw_answer": "kept"}  # unknown optional fields are allowed
    _write_rows(folder, rows)
    res = _json(folder / "results.json")
    res["parse_mode"] = "lenient"
    res["counts"]["off_label"] = 0
    (folder / "results.json").write_text(dumps_json(res))
    problems = _problems(folder)
    assert any(p.startswith(f"{folder / 'samples.jsonl'}:1: targets.0.tier: 'leaked-a-bit' is not one of") for p in problems)
    assert any(f"{folder / 'results.json'}: parse_mode: 'lenient' is not one of" in p for p in problems)
    assert len(problems) == 2
    sub = _json(folder / "submission.json")
    sub["schema_versions"]["results"] = "results-9"
    (folder / "submission.json").write_text(dumps_json(sub))
    assert "schema_versions is" in _problems(folder)[0]


def test_task_hash_does_not_depend_on_where_the_tasks_are_installed(tmp_path, monkeypatch):
    import shutil as _shutil

    import privasis_bench.tasks.paths as paths
    import privasis_bench.tasks.registry as registry
    from privasis_bench.tasks.registry import load_task

    here_hash = load_task(TASK).config_hash()
    copy = _shutil.copytree(registry.builtin_tasks_dir(), tmp_path / "elsewhere" / "tasks")
    monkeypatch.setattr(registry, "builtin_tasks_dir", lambda: copy)
    monkeypatch.setattr(paths, "builtin_tasks_dir", lambda: copy)
    assert load_task(TASK).config_hash() == here_hash
    (copy / "prompts" / "judge_compare.txt").write_text("changed {attribute} {response1} {response2} {true_value}")
    assert load_task(TASK).config_hash() != here_hash


def test_changed_task_hash_is_named(subs):
    # Edited in both files (so they agree with each other): recomputed from the shipped task, it still differs.
    folder = _identity(subs)
    for name in ("submission.json", "results.json"):
        data = _json(folder / name)
        data["task"]["config_hash"] = "1" * 64
        (folder / name).write_text(dumps_json(data))
    _rehash(folder)
    from privasis_bench.tasks.registry import load_task
    assert _problems(folder) == [f"{folder / 'results.json'}: task.config_hash {'1' * 64!r} is not the hash of the "
                                 f"shipped task '{TASK}' with the recorded testee prompt ({load_task(TASK).config_hash()})"]


