"""`export-sft` and `train` on the command line: evaluation records are refused unless told otherwise; one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def cli(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp / "hf")}
    return subprocess.run([sys.executable, "-m", "privasis_bench", *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp)


def test_export_refuses_records_of_an_evaluation_task(tmp_path: Path):
    out = tmp_path / "train.jsonl"
    proc = cli("export-sft", "-i", "privasis_sample", "-o", str(out), "--dedup-against", "privasis_sample", tmp=tmp_path)
    assert proc.returncode == 2
    assert "no training example survived the filters" in proc.stderr
    assert out.read_text() == ""
    report = json.loads((tmp_path / "train.jsonl.export.json").read_text())["report"]
    assert report["eval_overlap"]["id"] == 29 and report["train"] == 0  # every row, the 2 never scored included


def test_export_by_default_checks_every_builtin_task_and_says_what_to_do_when_one_cannot_load(tmp_path: Path):
    proc = cli("export-sft", "-i", "privasis_sample", "-o", str(tmp_path / "t.jsonl"), tmp=tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "t.jsonl").exists()
    line = proc.stderr.strip()
    assert "\n" not in line and "evaluation data privasis_hard: cannot load" in line and "--dedup-against" in line and "--allow-eval-overlap" in line


def test_export_when_told_to_allow_overlap_reports_counts(tmp_path: Path):
    proc = cli("export-sft", "-i", "privasis_sample", "-o", str(tmp_path / "t.jsonl"), "--allow-eval-overlap",
               "--heldout", "0.2", "--instruction", "mix", tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "success filter off" in proc.stdout and "not checked" in proc.stdout
    train = (tmp_path / "t.jsonl").read_text().splitlines()
    held = (tmp_path / "t.heldout.jsonl").read_text().splitlines()
    assert len(train) + len(held) == 29 and held
    filtered = cli("export-sft", "-i", "privasis_sample", "-o", str(tmp_path / "f.jsonl"), "--allow-eval-overlap",
                   "--only-successful", tmp=tmp_path)
    assert filtered.returncode == 0, filtered.stderr
    assert "deterministic (--judge none rules) 27" in filtered.stdout
    assert len((tmp_path / "f.jsonl").read_text().splitlines()) == 27


def test_train_errors_are_one_line(tmp_path: Path):
    proc = cli("train", "--recipe", "train_cleaner_9b", "--data", "x.jsonl", "-o", "out", tmp=tmp_path)
    assert proc.returncode == 2 and "no such training recipe" in proc.stderr and "train_cleaner_0.6b" in proc.stderr
    proc = cli("train", "--recipe", "train_cleaner_0.6b", "--data", "missing.jsonl", "-o", "out", tmp=tmp_path)
    assert proc.returncode == 2 and "--data: file not found: missing.jsonl" in proc.stderr
