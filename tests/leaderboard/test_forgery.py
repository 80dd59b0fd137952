"""Issue 33: a determined forger, a submission that tries to steer or stall CI, and who owns an entry.

Every adversarial submission is built here from the honest test entries (nothing forged is shipped).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from leaderboard_fakes import TASK, PinnedNameJudge, fresh_copy, invoke
from leaderboard_fakes import identity_dir as _identity
from leaderboard_fakes import scrubber_dir as _scrubber

import privasis_bench.pipeline.run as runner_mod
import privasis_bench.tasks.registry as registry
from privasis_bench.leaderboard.claims import derive_counts
from privasis_bench.leaderboard.provenance import sha256_file
from privasis_bench.leaderboard.submit import SubmissionError, submit_run
from privasis_bench.leaderboard.verify import verify_paths, verify_submission
from privasis_bench.results.files import dumps_json
from privasis_bench.results.rescore import rescore_task


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def _rows(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]


def _write(folder: Path, rows: list[dict] | None = None, results: dict | None = None, sub: dict | None = None) -> None:
    """Write edited files and make every hash and derived number match (what a careful forger does)."""
    if rows is not None:
        (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if results is not None:
        (folder / "results.json").write_text(dumps_json(results))
    sub = sub if sub is not None else _json(folder / "submission.json")
    sub["files"] = {name: sha256_file(folder / name) for name in sub["files"]}
    (folder / "submission.json").write_text(dumps_json(sub))


def _forge_consistently(folder: Path, share: float) -> int:
    """Flip ``share`` of the judged keep decisions (raw answers, verdicts and metrics all rewritten to match)."""
    rows = _rows(folder)
    judged = [k for r in rows for k in r.get("keep") or [] if k["via"] == "judge"]
    flipped = judged[: max(1, round(share * len(judged)))]
    for k in flipped:
        answer = "NO" if k["retained"] else "YES"
        k.update(inclusion_answer=answer, inclusion_answer_raw=answer, retained=not k["retained"])
    _write(folder, rows=rows)
    res = _json(folder / "results.json")
    res["metrics"] = rescore_task(folder).results["metrics"]
    res["counts"]["off_label"] = derive_counts(_rows(folder)).off_label
    _write(folder, results=res)
    assert verify_submission(folder).ok  # every file check passes: only the re-judge can tell
    return len(flipped)


def test_a_forgery_that_avoids_a_predictable_sample_is_caught_with_a_fresh_seed(subs, monkeypatch):
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: PinnedNameJudge(spec.model))
    folder = _scrubber(subs)
    _forge_consistently(folder, 1.0)  # every kept/lost decision: each kind gets a draw, so every seed catches it
    outs = [invoke("leaderboard", "verify", str(folder), expect=1).output for _ in range(2)]
    seeds = [re.search(r"rejudge seed (\d+) \(repeat this exact check with --seed \1\)", o).group(1) for o in outs]
    assert seeds[0] != seeds[1]  # fresh randomness on every run, printed
    assert all("firm disagreement(s)" in o and " keep:" in o for o in outs)
    again = invoke("leaderboard", "verify", str(folder), "--seed", seeds[0], expect=1).output
    assert again.split("\n", 1)[1] == outs[0].split("\n", 1)[1]  # the same check, repeated exactly


def test_agreement_per_entry_is_in_the_verify_report(subs, monkeypatch, tmp_path):
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: PinnedNameJudge(spec.model))
    report = tmp_path / "report.json"
    invoke("leaderboard", "verify", str(subs), "--seed", "11", "--report", str(report))
    entries = {e["name"]: e for e in _json(report)["entries"]}
    agreement = entries["baselines/regex-scrubber"]["agreement"]
    assert agreement["seed"] == 11 and agreement["passed"] and agreement["asked"] == agreement["agreed"] >= 1
    assert entries["baselines/identity"]["agreement"] is None  # self-reported: not re-judged
    assert _json(report)["rejudge_seed"] == 11


def test_a_task_name_never_resolves_to_a_file_the_submission_adds(subs, monkeypatch, tmp_path):
    """A YAML next to the submission (or in the working directory) naming its own judge endpoint is never loaded."""
    evil = tmp_path / "evil.yaml"
    evil.write_text((Path(registry.builtin_tasks_dir()) / "privasis_sample.yaml").read_text()
                    .replace("task: privasis_sample", "task: evil"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(registry, "load_task", lambda *a, **k: pytest.fail("a submission's task name was resolved"))
    folder = _scrubber(subs)  # verified track
    for name in ("./evil.yaml", str(evil), "../evil"):  # paths are never task names
        res, sub = _json(folder / "results.json"), _json(folder / "submission.json")
        res["task"]["name"] = sub["task"]["name"] = name
        _write(folder, results=res, sub=sub)
        assert any("is not a plain task name" in p for p in verify_submission(folder).problems)
    for name in ("evil.yaml", "evil", "privasis"):  # a file name, a task only the submitter has, a group name
        res, sub = _json(folder / "results.json"), _json(folder / "submission.json")
        res["task"]["name"] = sub["task"]["name"] = name
        _write(folder, results=res, sub=sub)
        v = verify_submission(folder)
        assert v.custom == ["task file"] and any("track is verified but the run used task file" in p for p in v.problems)


def test_transport_arguments_in_a_submission_are_never_used(subs, monkeypatch):
    seen = []
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: seen.append(dict(spec.args)) or PinnedNameJudge(spec.model))
    folder = _scrubber(subs)
    for name in ("results.json", "submission.json"):
        data = _json(folder / name)
        data["judge"]["spec"]["args"] = {"base_url": "http://attacker.example:8000/v1"}
        _write(folder, **({"results": data} if name == "results.json" else {"sub": data}))
    out = invoke("leaderboard", "verify", str(folder), expect=1).output
    assert "transport argument(s) base_url" in out
    assert all("base_url" not in args for args in seen)


@pytest.mark.parametrize("field,value", [("samples", 10**9), ("confidence", 0.5), ("seed", 7)])
def test_bootstrap_settings_must_be_the_tasks(subs, field, value):
    folder = _identity(subs)
    res = _json(folder / "results.json")
    res["metrics"]["bootstrap"][field] = value
    _write(folder, results=res)
    problems = verify_submission(folder).problems
    assert problems == [f"{folder / 'results.json'}: metrics.bootstrap.{field} is {value!r}, the task 'privasis_sample' "
                        f"sets {dict(samples=1000, confidence=0.95, seed=1234)[field]!r} (re-run or rescore with the "
                        "task's bootstrap settings)"]


def test_broken_entries_are_rejected_in_one_line_and_the_others_still_verify(subs):
    broken = {}
    for i, (name, payload) in enumerate([("samples.jsonl", b"\x89PNG\r\n\x1a\n\x00\xff"),
                                         ("results.json", b"[" * 100000 + b"]" * 100000),
                                         ("submission.json", b"{not json"),
                                         ("samples.jsonl", None)]):
        folder = fresh_copy(_identity(subs), subs / f"broken{i}__x" / TASK)
        (folder / name).write_bytes(payload) if payload is not None else (folder / name).unlink()
        broken[folder] = name
    outcomes = {v.path: v for v in verify_paths([subs])}
    for folder, name in broken.items():
        assert len(outcomes[folder].problems) == 1 and str(folder / name) in outcomes[folder].problems[0]
    assert "nested too deeply" in outcomes[next(f for f, n in broken.items() if n == "results.json")].problems[0]
    assert outcomes[_scrubber(subs)].ok and outcomes[_identity(subs)].ok


def test_an_output_longer_than_the_token_budget_allows_is_rejected(subs):
    folder = _identity(subs)
    rows = _rows(folder)
    rows[0]["output"] = rows[0]["raw_output"] = "x " * 100000
    _write(folder, rows=rows)
    problems = verify_submission(folder).problems
    assert len(problems) == 2 and all(f"record {rows[0]['record_id']}" in p and "output budget of 1024 tokens" in p
                                      for p in problems)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def _copy_as(subs: Path, name: str, reserialize: bool = True, backdate: bool = True) -> Path:
    copy = fresh_copy(_identity(subs), subs / name.replace("/", "__") / TASK)
    sub = _json(copy / "submission.json")
    sub["name"] = name
    if backdate:
        sub["dates"]["submitted"] = "2001-01-01T00:00:00+00:00"
    if reserialize:  # new bytes, same content
        rows = _rows(copy)
        (copy / "samples.jsonl").write_text("".join(json.dumps(r, indent=None, separators=(", ", ":  ")) + "\n"
                                                    for r in rows))
    _write(copy, sub=sub)
    return copy


def test_a_reserialized_copy_is_rejected_and_the_entry_on_the_base_branch_keeps_its_outputs(subs, monkeypatch):
    monkeypatch.delenv("PRIVASIS_BENCH_BASE_REF", raising=False)
    _git(subs, "init", "-q", "-b", "main")
    _git(subs, "add", "-A")
    _git(subs, "commit", "-qm", "entries on the base branch")
    copy = _copy_as(subs, "aaa/early-bird")  # sorts first, backdated, new bytes
    outcomes = {v.path: v for v in verify_paths([subs])}
    assert outcomes[_identity(subs)].ok
    assert any("the same samples as" in p and "already on the base branch" in p for p in outcomes[copy].problems)


def test_two_new_entries_with_equal_content_are_both_rejected(subs):
    first, second = _copy_as(subs, "one/copy"), _copy_as(subs, "two/copy", backdate=False)
    outcomes = {v.path: v for v in verify_paths([subs])}  # not a git repository: every entry is new
    for folder in (first, second, _identity(subs)):
        assert any("the same samples as" in p and "both are rejected" in p for p in outcomes[folder].problems)


def test_names_differing_only_by_case_or_punctuation_are_one_entry(subs, made, tmp_path):
    clash = fresh_copy(_scrubber(subs), subs / "Baselines__regex.scrubber" / TASK)
    sub = _json(clash / "submission.json")
    sub["name"] = "Baselines/regex.scrubber"
    _write(clash, sub=sub)
    outcomes = {v.path: v for v in verify_paths([subs])}
    assert any("is also claimed by" in p for p in outcomes[clash].problems)
    with pytest.raises(SubmissionError, match="already holds this name"):
        submit_run(made["runs"] / "identity", "BASELINES/Identity", root=subs)
    submit_run(made["runs"] / "identity", "org/m:1", root=tmp_path / "s")
    submit_run(made["runs"] / "identity", "org/m-2", root=tmp_path / "s")
    assert {p.name for p in (tmp_path / "s").iterdir()} == {"org__m%3A1", "org__m-2"}


def test_a_gold_reading_baseline_can_never_rank(subs):
    folder = _identity(subs)
    res, sub = _json(folder / "results.json"), _json(folder / "submission.json")
    for data in (res, sub):
        data["model"]["spec"] = {"provider": "mask-targets", "model": "", "args": {}}
        data["model"]["rankable"] = True  # marked rankable by hand
    _write(folder, results=res, sub=sub)
    v = verify_submission(folder)
    assert any("model reads gold labels" in p for p in v.problems)
    sub["reference"] = True
    _write(folder, sub=sub)
    v = verify_submission(folder)
    assert not any("gold labels" in p for p in v.problems) and v.facts()["rankable"] is False


def test_a_limited_run_is_partial_and_a_full_run_is_not(subs):
    facts = verify_submission(_scrubber(subs)).facts()
    assert facts["partial"] is False and facts["records_of_task"] == 29 and facts["rankable"] is True


def test_the_shipped_submissions_verify_and_limited_runs_are_partial(committed_verdicts):
    # one name can hold entries on several tasks (SmolLM2 is on the Privasis and the SPIA sample): key by both
    outcomes = {(v.submission["name"], v.submission["task"]["name"]): v for v in committed_verdicts}
    assert len(outcomes) == len(committed_verdicts)
    assert all(v.ok for v in outcomes.values()), {n: v.problems for n, v in outcomes.items() if not v.ok}
    smol = outcomes["HuggingFaceTB/SmolLM2-135M-Instruct", "privasis_sample"].facts()
    assert smol["partial"] is True and smol["scored_records"] < smol["records_of_task"] == 29
    assert outcomes["baselines/identity", "privasis_sample"].facts()["partial"] is False
    spia = outcomes["HuggingFaceTB/SmolLM2-135M-Instruct", "spia_sample"].facts()  # all 5 documents: not partial
    assert spia["partial"] is False and spia["scored_records"] == spia["records_of_task"] == 5


def test_the_judge_label_is_cross_checked(subs):
    folder = _scrubber(subs)
    res, sub = _json(folder / "results.json"), _json(folder / "submission.json")
    res["judge"]["label"] = sub["judge"]["label"] = "gpt-5 (trust me)"
    _write(folder, results=res, sub=sub)
    assert any("judge.label is 'gpt-5 (trust me)' but the recorded judge spec is 'llamacpp:smollm2'" in p
               for p in verify_submission(folder).problems)


def _run(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
    invoke("run", "-m", "identity", "--judge", "none", "--limit", "3", "--no-progress", "-o", str(out),
           "--cache-dir", str(tmp_path / "cache"), *extra)
    return out


def test_runs_with_files_of_ones_own_are_submitted_self_reported(tmp_path):
    """Own data files, an own task YAML and own judge prompts: submit works (self-reported), verify accepts it."""
    shipped = Path(registry.builtin_tasks_dir())
    data = tmp_path / "mine.jsonl"
    data.write_text((shipped / "sample" / "privasis_sample.jsonl").read_text())
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for f in (shipped / "prompts").glob("judge_*.txt"):
        (prompts / f.name.removeprefix("judge_")).write_text(f.read_text() + "\n")
    yaml = tmp_path / "my_task.yaml"
    yaml.write_text(f"task: my_task\ninclude: {shipped / '_privasis_base.yaml'}\nversion: 1\n"
                    f"dataset:\n  path: null\n  revision: null\n  data_files: {data}\n")
    cases = [(("-t", TASK, "--data-files", str(data)), ["data files"]),
             (("-t", str(yaml)), ["data files", "task file"]),
             (("-t", TASK, "--judge-prompts", str(prompts)), ["judge prompts"])]
    for extra, custom in cases:
        out = _run(tmp_path, *extra)  # one run: refused on the verified track, then submitted self-reported
        with pytest.raises(SubmissionError, match="not eligible for the verified track: the run used"):
            submit_run(out, "me/mine", track="verified", root=tmp_path / "subs")
        (folder,) = submit_run(out, "me/mine", track="self-reported", root=tmp_path / "subs")
        sub = _json(folder / "submission.json")
        assert sub["custom_inputs"] == custom and sub["track"] == "self-reported"
        refs = json.dumps(_json(folder / "results.json"))
        assert str(tmp_path) not in refs and '"sha256"' in refs  # hash-recorded, no local path
        v = verify_submission(folder)
        assert v.ok and v.custom == custom, v.problems
        shutil.rmtree(folder.parent)


def test_every_hub_task_pins_a_dataset_commit_and_verify_reads_a_checked_local_copy(tmp_path, monkeypatch):
    from privasis_bench.data.loading import load_records, with_data_files
    from privasis_bench.leaderboard import data_source
    from privasis_bench.leaderboard.task_source import shipped_task, shipped_task_names

    hub = [shipped_task(n) for n in shipped_task_names()
           if shipped_task(n).dataset.path and shipped_task(n).scorer == "privasis"]  # TAB reads local files
    assert hub and all(re.fullmatch(r"[0-9a-f]{40}", t.dataset.revision or "") for t in hub)
    assert all(data_source.pinned_data()[t.task]["revision"] == t.dataset.revision for t in hub)
    task = shipped_task("privasis_vanilla")
    sample = Path(registry.builtin_tasks_dir()) / "sample" / "privasis_sample.jsonl"
    with pytest.raises(data_source.DataUnavailable, match="place it as .*privasis_vanilla.jsonl"):
        data_source.task_records(task, limit=None, directory=tmp_path)
    (tmp_path / "privasis_vanilla.jsonl").write_text(sample.read_text())
    real = load_records(with_data_files(task, [str(tmp_path / "privasis_vanilla.jsonl")])).ids_hash
    pins = {task.task: {"revision": task.dataset.revision, "ids_hash": None}}
    monkeypatch.setattr(data_source, "pinned_data", lambda: pins)
    with pytest.raises(data_source.DataUnavailable, match=f"no record-id hash pinned yet .* gives {real}"):
        data_source.task_records(task, limit=None, directory=tmp_path)
    pins[task.task]["ids_hash"] = "0" * 64
    with pytest.raises(data_source.DataUnavailable, match="is not the pinned"):
        data_source.task_records(task, limit=None, directory=tmp_path)
    pins[task.task]["ids_hash"] = real
    with pytest.raises(data_source.DataUnavailable, match="no content hash pinned yet"):
        data_source.task_records(task, limit=None, directory=tmp_path)
    pins[task.task] = data_source.local_pin(task, tmp_path)
    monkeypatch.setenv(data_source.DATA_DIR_ENV, str(tmp_path))
    loaded, total = data_source.task_records(task, limit=5)
    assert total == 29 and len(loaded.records) == 5


def test_a_verify_report_carries_agreement_into_the_board_data(subs, monkeypatch, tmp_path):
    from privasis_bench.leaderboard.rejudge_report import apply_to_board, read_report

    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: PinnedNameJudge(spec.model))
    report = tmp_path / "report.json"
    invoke("leaderboard", "verify", str(subs), "--seed", "5", "--report", str(report))
    outcomes = verify_paths([subs])
    apply_to_board(read_report(report), outcomes)
    facts = {v.submission["name"]: v.facts() for v in outcomes}
    assert facts["baselines/regex-scrubber"]["agreement"]["seed"] == 5 and facts["baselines/identity"]["agreement"] is None


def test_padding_a_row_with_unknown_fields_or_linking_a_file_is_rejected(subs):
    folder = _identity(subs)
    rows = _rows(folder)
    rows[1]["padding"] = "y" * 3_000_000  # a field the schema does not know, far over what the budgets allow
    _write(folder, rows=rows)
    (problem,) = verify_submission(folder).problems
    assert f"record {rows[1]['record_id']}: its samples line has" in problem
    other = _scrubber(subs)
    (other / "results.json").unlink()
    (other / "results.json").symlink_to(folder / "results.json")
    assert verify_submission(other).problems == [f"{other / 'results.json'}: a symbolic link; a submission holds plain "
                                                 "files only"]
