"""Issue 23 point 3: every numeric option and config key has a documented sane range; out of range is one line, exit 2."""

from __future__ import annotations

import pytest
from cli_main import run_main

RUN = ["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none", "--no-progress"]


@pytest.mark.parametrize("args, culprit", [
    (["--bootstrap-samples", "99999999999"], "--bootstrap-samples"),
    (["--retry-base-delay", "inf"], "--retry-base-delay"),
    (["--retry-max-delay", "1e308"], "--retry-max-delay"),
    (["--seed", "-5"], "--seed"),
    (["--max-tokens", "1000000000"], "--max-tokens"),
    (["--concurrency", "100000"], "--concurrency"),
])
def test_out_of_range_options_are_one_line(tmp_path, monkeypatch, capsys, args, culprit):
    code, out, err = run_main([*RUN, "-o", str(tmp_path / "o"), *args], monkeypatch, capsys)
    assert code == 2 and culprit in err and "Traceback" not in out + err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_timeout_argument_must_be_finite(tmp_path, monkeypatch, capsys):
    code, _, err = run_main([*RUN[:2], "openai:x", *RUN[3:], "--model-args", "base_url=http://127.0.0.1:9/v1,timeout=1e309",
                             "-o", str(tmp_path / "o")], monkeypatch, capsys)
    assert code == 2 and "timeout=" in err and "between 0 and 86400 seconds" in err


def test_task_yaml_budget_out_of_range(tmp_path, monkeypatch, capsys):
    task = tmp_path / "big.yaml"
    from privasis_bench.tasks.paths import builtin_tasks_dir

    base = builtin_tasks_dir() / "privasis_sample.yaml"
    task.write_text(f"task: big_budget\ninclude: {base}\ngeneration:\n  max_tokens: 1.0e30\n", encoding="utf-8")
    code, _, err = run_main([*RUN[:4], str(task), *RUN[5:], "-o", str(tmp_path / "o")], monkeypatch, capsys)
    assert code == 2 and "max_tokens" in err and "Traceback" not in err


def test_rescore_write_takes_the_task_directory_lock(tmp_path, monkeypatch, capsys):
    from privasis_bench.pipeline.lock import task_dir_lock

    code, _, _ = run_main([*RUN, "-o", str(tmp_path / "r"), "--limit", "2", "--bootstrap-samples", "20"], monkeypatch, capsys)
    assert code == 0
    with task_dir_lock(tmp_path / "r" / "privasis_sample", "run"):
        code, _, err = run_main(["rescore", str(tmp_path / "r"), "--write"], monkeypatch, capsys)
    assert code == 2 and "is being written by another privasis-bench process" in err
    code, _, _ = run_main(["rescore", str(tmp_path / "r"), "--write"], monkeypatch, capsys)
    assert code == 0
