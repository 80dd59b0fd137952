"""Issue 42: every documented path to the paper's numbers judges what the official client read.

A model that answers one record with nothing is run three ways against one deterministic fake server: ``run
--preset paper``; ``sanitize --preset paper`` then ``evaluate --preset paper``; the default ``sanitize`` (the empty
answer becomes a failed output) then ``evaluate --preset paper --score-failed-as-empty``. Every decision of the
three must be the same, and the empty answer must be shown to the judge as ``""``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import ANSWER_CUE, OK, Action, FakeOpenAIServer, write_tiny_task

pytest.importorskip("openai")

EMPTY_RECORD = "r001"
COMMON = ["--no-progress", "--retry-base-delay", "0.01", "--no-cache"]
JUDGED = ["--bootstrap-samples", "20", "--max-off-label", "1000"]


def _script(prompt: str, n: int) -> Action:
    is_model = prompt.rstrip().endswith(ANSWER_CUE)
    return Action(content="") if is_model and "Person1 Example" in prompt else OK


def _judge(url: str) -> list[str]:
    return ["--judge", "openai:fake-judge", "--judge-args", f"base_url={url}"]


def _model(url: str) -> list[str]:
    return ["--model", "openai:fake-model", "--model-args", f"base_url={url}"]


def _decisions(task_dir: Path) -> dict[str, tuple]:
    """Every decision of a samples file: per record, the output judged and each attribute's verdict and answers."""
    out = {}
    for line in (task_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[row["record_id"]] = (row["status"], row["output"],
                                 tuple((t["name"], t["tier"], t.get("guess"), t.get("compare_answer")) for t in row["targets"]),
                                 tuple((k["name"], k["via"], k["retained"], k.get("inclusion_answer")) for k in row["keep"]))
    return out


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=3)
    with FakeOpenAIServer(script=_script) as server:
        yield yaml, server.base_url, tmp_path


def test_every_documented_paper_path_judges_an_empty_answer_like_the_official_client(setup, monkeypatch, capsys):
    yaml, url, tmp = setup
    code, out, err = run_main(["run", *_model(url), *_judge(url), "-t", str(yaml), "-o", str(tmp / "run"), "--preset",
                               "paper", *COMMON, *JUDGED], monkeypatch, capsys)
    assert code == 0, out + err
    reference = _decisions(tmp / "run" / "tiny")
    status, output, targets, keep = reference[EMPTY_RECORD]
    assert status == "judged" and output == ""
    assert all(t[2] is not None for t in targets) and all(k[3] is not None for k in keep)  # the judge was asked

    # sanitize --preset paper keeps the empty answer as it is; evaluate --preset paper judges it
    code, out, err = run_main(["sanitize", *_model(url), "-t", str(yaml), "-o", str(tmp / "s"), "--preset", "paper",
                               *COMMON], monkeypatch, capsys)
    assert code == 0, out + err
    saved = tmp / "s" / "tiny" / "sanitized.jsonl"
    code, out, err = run_main(["evaluate", "-p", str(saved), *_judge(url), "-t", str(yaml), "-o", str(tmp / "e"),
                               "--preset", "paper", *COMMON, *JUDGED], monkeypatch, capsys)
    assert code == 0, out + err
    assert _decisions(tmp / "e" / "tiny") == reference

    # the default sanitize asks again and records a failed output; the preset alone leaves the results incomplete ...
    code, out, err = run_main(["sanitize", *_model(url), "-t", str(yaml), "-o", str(tmp / "d"), "--max-attempts", "2",
                               *COMMON], monkeypatch, capsys)
    assert code == 1, out + err
    saved = tmp / "d" / "tiny" / "sanitized.jsonl"
    code, out, err = run_main(["evaluate", "-p", str(saved), *_judge(url), "-t", str(yaml), "-o", str(tmp / "f"),
                               "--preset", "paper", *COMMON, *JUDGED], monkeypatch, capsys)
    assert code == 1 and "failed" in out, out + err
    # ... and --score-failed-as-empty shows the failed output to the judge as "", as the official client reads it
    code, out, err = run_main(["evaluate", "-p", str(saved), *_judge(url), "-t", str(yaml), "-o", str(tmp / "g"),
                               "--preset", "paper", "--score-failed-as-empty", *COMMON, *JUDGED], monkeypatch, capsys)
    assert code == 0, out + err
    assert _decisions(tmp / "g" / "tiny") == reference
    results = json.loads((tmp / "g" / "tiny" / "results.json").read_text())
    assert results["complete"] is True and results["counts"]["failed_outputs"] == 1
    assert results["failed_output_records"] == [EMPTY_RECORD]
    # rescore re-derives those verdicts with the recorded rule and finds nothing to report
    code, out, err = run_main(["rescore", str(tmp / "g")], monkeypatch, capsys)
    assert code == 0 and "recomputed metrics match" in out and "contradiction" not in out, out + err


def test_score_failed_as_empty_without_the_judge_rule_still_asks_nothing(setup, monkeypatch, capsys):
    yaml, url, tmp = setup
    run_main(["sanitize", *_model(url), "-t", str(yaml), "-o", str(tmp / "d"), "--max-attempts", "1", *COMMON],
             monkeypatch, capsys)
    code, out, err = run_main(["evaluate", "-p", str(tmp / "d" / "tiny" / "sanitized.jsonl"), *_judge(url), "-t",
                               str(yaml), "-o", str(tmp / "h"), "--score-failed-as-empty", *COMMON, *JUDGED],
                              monkeypatch, capsys)
    assert code == 0, out + err
    status, output, targets, keep = _decisions(tmp / "h" / "tiny")[EMPTY_RECORD]
    assert output is None and {t[1] for t in targets} == {"sanitized"} and all(t[2] is None for t in targets)
    assert {k[1] for k in keep} == {"empty_output"}


def test_the_preset_refuses_to_post_process_saved_predictions(setup, monkeypatch, capsys):
    yaml, url, tmp = setup
    preds = tmp / "preds.jsonl"
    preds.write_text(json.dumps({"id": "r000", "model_sanitized_text": "x"}) + "\n", encoding="utf-8")
    code, out, err = run_main(["evaluate", "-p", str(preds), *_judge(url), "-t", str(yaml), "-o", str(tmp / "x"),
                               "--preset", "paper", "--predictions-postprocess", "testee", *COMMON], monkeypatch, capsys)
    assert code == 2 and "--predictions-postprocess testee" in err and "--preset paper" in err, out + err
    assert len(err.strip().splitlines()) == 1 and not (tmp / "x").exists()


def test_the_preset_refuses_failed_outputs_whose_answers_were_cut(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)

    def cut(prompt: str, n: int) -> Action:
        return Action(content="half an answ", finish_reason="length") if prompt.rstrip().endswith(ANSWER_CUE) else OK

    with FakeOpenAIServer(script=cut) as server:
        url = server.base_url
        code, out, err = run_main(["sanitize", *_model(url), "-t", str(yaml), "-o", str(tmp_path / "d"),
                                   "--max-attempts", "1", *COMMON], monkeypatch, capsys)
        assert code == 1, out + err
        code, out, err = run_main(["evaluate", "-p", str(tmp_path / "d" / "tiny" / "sanitized.jsonl"), *_judge(url),
                                   "-t", str(yaml), "-o", str(tmp_path / "e"), "--preset", "paper",
                                   "--score-failed-as-empty", *COMMON], monkeypatch, capsys)
    assert code == 2 and "cut at the token budget" in err and "sanitize --preset paper" in err, out + err
    assert not (tmp_path / "e" / "tiny").exists()


def test_sanitize_honours_the_task_answer_policy(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)
    yaml.write_text(yaml.read_text(encoding="utf-8") + "answer_policy:\n  truncated_answers: accept\n", encoding="utf-8")

    def cut(prompt: str, n: int) -> Action:
        return Action(content="half an answ", finish_reason="length")

    with FakeOpenAIServer(script=cut) as server:
        code, out, err = run_main(["sanitize", *_model(server.base_url), "-t", str(yaml), "-o", str(tmp_path / "d"),
                                   "--max-attempts", "1", *COMMON], monkeypatch, capsys)
        assert code == 0 and "2 cut at the token budget" in out, out + err
        # an option given on the command line still wins over the task's policy
        code, out, err = run_main(["sanitize", *_model(server.base_url), "-t", str(yaml), "-o", str(tmp_path / "r"),
                                   "--max-attempts", "1", "--truncated-answers", "retry", *COMMON], monkeypatch, capsys)
        assert code == 1 and "cut at the token budget" in err, out + err


@pytest.mark.parametrize("extra, option", [(["--max-tokens", "100"], "--max-tokens"),
                                           (["--empty-answers", "retry"], "--empty-answers"),
                                           (["--truncated-answers", "retry"], "--truncated-answers"),
                                           (["--instruction", "smoothed"], "--instruction")])
def test_sanitize_refuses_an_option_that_contradicts_the_preset(extra, option, tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["sanitize", "-m", "identity", "-t", "privasis_sample", "--preset", "paper", *extra, "-o",
                             str(tmp_path / "out"), "--limit", "1"], monkeypatch, capsys)
    assert code == 2 and f"{option} " in err and "contradicts --preset paper" in err, err
    assert not (tmp_path / "out").exists()
