"""Everything a run writes is shareable: no home directory, temporary directory, virtualenv or checkout path."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from fake_openai_server import write_tiny_task
from judge_fakes import write_templates
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.tasks.registry import builtin_tasks_dir, load_task

FORBIDDEN = ("site-packages", "/tmp/", os.path.expanduser("~") + "/", str(builtin_tasks_dir().parent) + "/")


def invoke(*args: str) -> None:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def local_paths_in(run_dir: Path, *also: str) -> list[str]:
    hits = []
    for path in run_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            hits += [f"{path.name}: {needle}" for needle in (*FORBIDDEN, *also) if needle in text]
    return hits


def test_a_sample_run_writes_no_local_path(tmp_path):
    out = tmp_path / "run"
    invoke("run", "-m", "identity", "--judge", "none", "-t", "privasis_sample", "-o", str(out), "--no-progress",
           "--cache-dir", str(tmp_path / "cache"), "--bootstrap-samples", "20")
    assert local_paths_in(out, str(tmp_path)) == []
    results = json.loads((out / "privasis_sample" / "results.json").read_text())
    assert results["task"]["source_file"] == "privasis_bench:tasks/privasis_sample.yaml"
    assert results["dataset"]["data_files"] == ["privasis_bench:tasks/sample/privasis_sample.jsonl"]
    assert results["judge"]["prompt_sources"]["compare"] == "privasis_bench:tasks/prompts/judge_compare.txt"


def test_user_files_are_named_by_base_name_and_sha256(tmp_path):
    task = write_tiny_task(tmp_path / "mytask", n=3)
    prompts = write_templates(tmp_path / "myprompts")
    out = tmp_path / "run"
    invoke("run", "-m", "identity", "--judge", "none", "-t", str(task), "-o", str(out), "--no-progress",
           "--judge-prompts", str(prompts), "--cache-dir", str(tmp_path / "cache"), "--bootstrap-samples", "20")
    assert local_paths_in(out, str(tmp_path)) == []
    results = json.loads((out / "tiny" / "results.json").read_text())
    assert results["task"]["source_file"]["name"] == "tiny.yaml" and len(results["task"]["source_file"]["sha256"]) == 64
    assert results["dataset"]["data_files"][0]["name"] == "tiny.jsonl"
    assert results["judge"]["prompt_sources"]["compare"]["name"] == "compare.txt"


def test_config_hash_does_not_depend_on_where_the_task_lives(tmp_path):
    first = write_tiny_task(tmp_path / "a", n=3)
    second_dir = tmp_path / "elsewhere" / "b"
    shutil.copytree(first.parent, second_dir)
    assert load_task(str(first)).config_hash() == load_task(str(second_dir / first.name)).config_hash()
