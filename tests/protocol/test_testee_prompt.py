"""The testee wording is pluggable (--prompt-template / --answer-cue) and recorded with its hash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_main import run_main
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.data.loading import load_records
from privasis_bench.errors import PrivasisError
from privasis_bench.protocol.testee import build_sanitize_request
from privasis_bench.protocol.testee_prompt import describe_testee_prompt, with_testee_prompt
from privasis_bench.tasks.registry import load_task

TASK = "privasis_sample"
REFERENCE_LIKE = "Task: {instruction}\n\nDocument:\n{text}\n\n**Sanitized Document:**\n"
LOADED = REFERENCE_LIKE[:-1]  # templates load without one trailing newline (issue 35.3)


@pytest.fixture()
def template(tmp_path: Path) -> Path:
    path = tmp_path / "my_wording.txt"
    path.write_text(REFERENCE_LIKE, encoding="utf-8")
    return path


def test_shipped_wording_is_recorded_as_shipped():
    info = describe_testee_prompt(load_task(TASK))
    assert info["shipped"] is True and info["template"] == "privasis_bench:tasks/prompts/sanitize.txt"
    assert info["answer_cue"] == "### Sanitized text:" and len(info["template_sha256"]) == 64


def test_plugged_wording_builds_the_request_and_is_recorded(template):
    task = with_testee_prompt(load_task(TASK), template, "**Sanitized Document:**")
    record = load_records(task, limit=1).records[0]
    content = build_sanitize_request(record, task).messages[0][1]
    assert content == LOADED.replace("{instruction}", record.base_instruction).replace("{text}", record.text)
    info = describe_testee_prompt(task)
    assert info["shipped"] is False and info["answer_cue"] == "**Sanitized Document:**"
    assert info["template_sha256"] == hashlib.sha256(LOADED.encode()).hexdigest()  # the text as loaded
    assert info["template"] == {"name": "my_wording.txt", "sha256": hashlib.sha256(REFERENCE_LIKE.encode()).hexdigest()}
    # A changed cue alone also makes the wording non-shipped.
    assert describe_testee_prompt(with_testee_prompt(load_task(TASK), answer_cue="Answer:"))["shipped"] is False


def test_bad_template_and_cue_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("only {text}", encoding="utf-8")
    with pytest.raises(PrivasisError, match=r"bad\.txt: the template lacks the placeholder\(s\) \{instruction\}"):
        with_testee_prompt(load_task(TASK), bad)
    with pytest.raises(PrivasisError, match="--answer-cue must not be blank"):
        with_testee_prompt(load_task(TASK), answer_cue="  ")


def _run(out: Path, cache: Path, *extra: str, expect: int = 0) -> tuple[dict, list[dict], str]:
    result = CliRunner().invoke(app, ["run", "-m", "identity", "-t", TASK, "--judge", "none", "-o", str(out),
                                      "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "50",
                                      "--limit", "3", *extra], catch_exceptions=False)
    assert result.exit_code == expect, result.output
    if expect:
        return {}, [], result.output
    results = json.loads((out / TASK / "results.json").read_text())
    outputs = [json.loads(x) for x in (out / TASK / "sanitized.jsonl").read_text().splitlines()]
    return results, outputs, result.output


def test_run_records_the_plugged_wording(tmp_path, template):
    default, default_out, _ = _run(tmp_path / "a", tmp_path / "cache")
    assert default["testee_prompt"]["shipped"] is True
    plugged, plugged_out, _ = _run(tmp_path / "b", tmp_path / "cache", "--prompt-template", str(template),
                                   "--answer-cue", "**Sanitized Document:**")
    assert plugged["testee_prompt"]["shipped"] is False
    assert plugged["testee_prompt"]["template_sha256"] == hashlib.sha256(LOADED.encode()).hexdigest()
    assert plugged["task"]["config_hash"] != default["task"]["config_hash"]
    # Each request was built from the plugged wording (its hash is what sanitized.jsonl records).
    task = with_testee_prompt(load_task(TASK), template, "**Sanitized Document:**")
    expected = [build_sanitize_request(r, task).prompt_hash() for r in load_records(task, limit=3).scored]
    assert [o["prompt_hash"] for o in plugged_out] == expected
    assert [o["prompt_hash"] for o in default_out] != expected


def test_run_with_a_template_lacking_a_placeholder_exits_2(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("{instruction} only", encoding="utf-8")
    code, out, err = run_main(["run", "-m", "identity", "-t", TASK, "--judge", "none", "-o", str(tmp_path / "c"),
                               "--no-progress", "--prompt-template", str(bad)], monkeypatch, capsys)
    assert code == 2 and "lacks the placeholder(s) {text}" in err and "Traceback" not in out + err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c" / TASK / "results.json").exists()
