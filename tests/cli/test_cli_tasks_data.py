"""The installed console script: `tasks list|show` and `data inspect`, and one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import privasis_bench
from privasis_bench.tasks.registry import builtin_tasks_dir

SIX_NAMES = ["privasis_vanilla", "privasis_hard", "privasis_vanilla_validation", "privasis_hard_validation", "privasis", "privasis_sample"]


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("privasis-bench")
    cmd = [exe] if exe else [sys.executable, "-m", "privasis_bench"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def test_tasks_list_shows_the_six_names():
    proc = cli("tasks", "list")
    assert proc.returncode == 0, proc.stderr
    for name in SIX_NAMES:
        assert name in proc.stdout
    assert "[vanilla/test]" in proc.stdout  # the data source is shown literally


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "privasis_bench", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and privasis_bench.__version__ in proc.stdout


def test_tasks_ship_with_the_package():
    """Installed from a wheel, the tasks live inside the package; in a checkout, beside it."""
    package_dir = Path(privasis_bench.__file__).resolve().parent
    tasks_dir = builtin_tasks_dir()
    assert (tasks_dir / "privasis_sample.yaml").is_file()
    assert (tasks_dir / "sample" / "privasis_sample.jsonl").is_file()
    if not (package_dir.parent / "pyproject.toml").is_file():  # a real (non-editable) install
        assert tasks_dir == package_dir / "_tasks"


def test_tasks_show_resolved():
    proc = cli("tasks", "show", "privasis_hard")
    assert proc.returncode == 0, proc.stderr
    assert "name: hard" in proc.stdout and "config_hash:" in proc.stdout and "judge_guess_target.txt" in proc.stdout


def test_data_inspect_sample_json():
    proc = cli("data", "inspect", "--tasks", "privasis_sample", "--json")
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    assert stats["records"] >= 24 and stats["excluded_records"] >= 1
    assert set(stats["targets_by_kind"]) == {"drop", "abstract"}
    assert {"list", "dict", "number", "null", "str"} <= set(stats["target_value_types"])


def test_data_inspect_sample_table():
    proc = cli("data", "inspect", "--tasks", "privasis_sample")
    assert proc.returncode == 0, proc.stderr
    assert "excluded records" in proc.stdout and "words per record" in proc.stdout


def test_bad_user_yaml_is_one_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(f"task: bad\ninclude: {builtin_tasks_dir() / '_privasis_base.yaml'}\ngeneraton: {{}}\n")
    proc = cli("data", "inspect", "--tasks", str(path))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "generaton" in lines[0]


@pytest.mark.parametrize("args", [["tasks", "show", "nope"], ["data", "inspect", "--tasks", "privasis_sampel"]])
def test_unknown_task_is_one_line(args):
    proc = cli(*args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "no such task" in proc.stderr
