"""Importing saved predictions: privasis-bench sanitize JSONL, lm-eval samples, reference JSONL."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from privasis_bench.adapters.base import Usage
from privasis_bench.data.records import Attribute, Record
from privasis_bench.errors import DataError
from privasis_bench.pipeline.predictions import MISSING_ERROR, detect_format, load_predictions
from privasis_bench.pipeline.sanitize import SanitizedOutput
from privasis_bench.protocol.testee import build_sanitize_request
from privasis_bench.tasks.config import TaskConfig

PROMPTS = Path(__file__).resolve().parents[2] / "tasks" / "prompts"
CUE = "### Sanitized text:"


def _record(rid: str) -> Record:
    return Record(
        id=rid,
        record_type="note",
        text=f"Patient {rid} is Ana Lopez, born 1980-02-03.",
        base_instruction="- Drop the patient's name.",
        smoothed_instruction="Please remove the name.",
        reference_sanitized="never used",
        targets=(Attribute("full_name", "Ana Lopez", "drop"),),
        keep=(Attribute("birth_year", "1980", "keep"),),
    )


@pytest.fixture()
def records() -> list[Record]:
    return [_record("r1"), _record("r2"), _record("r3")]


@pytest.fixture()
def task() -> TaskConfig:
    return TaskConfig.model_validate(
        {
            "task": "unit",
            "version": "1",
            "dataset": {"data_files": ["unused.jsonl"]},
            "prompt": {"template": str(PROMPTS / "sanitize.txt"), "answer_cue": CUE},
            "judge": {
                "model": "none",
                "templates": {
                    name: str(PROMPTS / f"judge_{file}.txt")
                    for name, file in [("guess_target", "guess_target"), ("guess_abstract", "guess_abstract"),
                                       ("guess_keep", "guess_keep"), ("compare", "compare"), ("inclusion", "inclusion")]
                },
            },
        }
    )


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _lmeval_row(doc_id: int, record: Record, raw: str | None, content: str) -> dict:
    """A row shaped like lm-eval 0.4's --log_samples output for a chat-templated API model."""
    messages = [{"role": "user", "content": content}]
    return {
        "doc_id": doc_id,
        "doc": {"id": record.id, "record_type": record.record_type, "prompt": content},
        "target": "",
        "arguments": {"gen_args_0": {"arg_0": [json.dumps(messages)], "arg_1": {"until": [], "max_gen_toks": 64}}},
        "resps": [[raw]],
        "filtered_resps": [raw],
        "filter": "none",
        "metrics": ["nonempty"],
        "doc_hash": "x",
        "prompt_hash": "y",
        "target_hash": "z",
        "nonempty": 1.0,
    }


def test_sanitized_format_taken_as_is_and_missing_counted(tmp_path, records):
    ok = SanitizedOutput(id="r1", prompt_hash="h1", raw_output="raw ### Sanitized text: kept", output="already clean",
                         usage=Usage(10, 5), model="openai:m")
    failed = SanitizedOutput(id="r2", prompt_hash="h2", raw_output=None, output=None, error="HTTP 500", model="openai:m")
    path = _write(tmp_path / "sanitized.jsonl", [ok.to_dict(), failed.to_dict()])

    preds = load_predictions(path, records)

    assert preds.report.format == "sanitized"
    assert set(preds) == {"r1", "r2"}  # r3 has no line: left out of the scores by default, and reported
    assert preds["r1"].output == "already clean"  # not post-processed a second time
    assert preds["r1"].usage.prompt_tokens == 10
    assert preds["r2"].output is None and preds["r2"].error == "HTTP 500"
    assert preds.report.missing == ["r3"] and preds.report.failed == 1 and preds.report.matched == 2
    assert preds.report.to_dict()["missing_policy"] == "leave_out"
    failed = load_predictions(path, records, missing="failed")
    assert failed["r3"].output is None and failed["r3"].error == MISSING_ERROR
    empty = load_predictions(path, records, missing="empty")
    assert empty["r3"].ok and empty["r3"].output == "" and empty.report.missing == ["r3"]
    assert any("scored as empty outputs (--score-missing-as-empty)" in n for n in empty.report.warnings())


def test_lmeval_samples_are_postprocessed_and_prompts_checked(tmp_path, records, task):
    prompts = {r.id: build_sanitize_request(r, task).messages[0][1] for r in records}
    rows = [
        _lmeval_row(0, records[0], "<think>plan</think>\nassistant\nPatient r1 is [NAME].\n### Sanitized text:", prompts["r1"]),
        _lmeval_row(1, records[1], "Intro text\n### Sanitized text:\nPatient r2.", "a different prompt"),
        _lmeval_row(2, records[2], "", prompts["r3"]),
    ]
    path = _write(tmp_path / "samples_privasis_sample_2026-01-01T00-00-00.jsonl", rows)

    preds = load_predictions(path, records, task=task)

    assert preds.report.format == "lmeval"
    assert preds["r1"].raw_output.startswith("<think>")
    assert preds["r1"].output == "Patient r1 is [NAME]."
    assert preds["r2"].output == "Patient r2."
    assert preds["r3"].output == "" and preds["r3"].error is None  # a real empty output, not a failure
    assert preds.report.empty == 1 and preds.report.missing == []
    assert preds.report.prompt_mismatch == ["r2"]
    assert preds["r1"].prompt_hash == build_sanitize_request(records[0], task).prompt_hash()
    # The smoothed variant builds other prompts: every row is then flagged.
    smoothed = load_predictions(path, records, task=task, instruction="smoothed")
    assert sorted(smoothed.report.prompt_mismatch) == ["r1", "r2", "r3"]


def test_lmeval_model_name_read_from_results_file(tmp_path, records):
    run_dir = tmp_path / "my-model"
    run_dir.mkdir()
    path = _write(run_dir / "samples_privasis_sample_2026-01-01T00-00-00.123.jsonl",
                  [_lmeval_row(0, records[0], "text", "p")])
    (run_dir / "results_2026-01-01T00-00-00.123.json").write_text(
        json.dumps({"config": {"model": "local-chat-completions", "model_args": "model=smol,base_url=http://x/v1"}}))
    preds = load_predictions(path, records, answer_cue=CUE)
    assert preds["r1"].model == "lm-eval:local-chat-completions:smol"


def test_reference_format_is_judged_verbatim_by_default(tmp_path, records):
    # The reference pipeline post-processed this text before writing it; its evaluator judges it as it is.
    path = _write(tmp_path / "ref.jsonl", [
        {"id": "r1", "model_sanitized_text": "Clean text\n### Sanitized text:", "extra": 1},
        {"id": "r2", "model_sanitized_text": None},
    ])
    preds = load_predictions(path, records, answer_cue=CUE)
    assert preds.report.format == "reference" and preds.report.postprocess == "none"
    assert preds["r1"].output == "Clean text\n### Sanitized text:"
    assert preds["r2"].output is None and "null" in preds["r2"].error
    assert "r3" not in preds and preds.report.missing == ["r3"]
    report = preds.report.to_dict()
    assert report["missing"] == 1 and report["postprocess"] == "none" and preds.report.failed == 1


@pytest.mark.parametrize(
    "text",
    [
        "<think>the patient is Ana Lopez</think>Patient [NAME].",  # a value inside a think block stays in the text
        "  Patient [NAME].\n",  # surrounding whitespace
        "assistant\nPatient [NAME].",  # a leading role token
        "Patient [NAME].\n### Sanitized text:",  # an answer-cue echo
    ],
)
def test_reference_text_is_not_cleaned_unless_asked(tmp_path, records, text):
    path = _write(tmp_path / "ref.jsonl", [{"id": "r1", "model_sanitized_text": text}])
    verbatim = load_predictions(path, records, answer_cue=CUE)
    assert verbatim["r1"].output == text == verbatim["r1"].raw_output
    cleaned = load_predictions(path, records, answer_cue=CUE, postprocess="testee")
    assert cleaned.report.postprocess == "testee" and cleaned.report.to_dict()["postprocess"] == "testee"
    assert cleaned["r1"].output == "Patient [NAME]."


def test_postprocess_choice_per_format(tmp_path, records, task):
    # lm-eval samples hold raw answers: cleaned by default, verbatim when asked.
    raw = "assistant\nPatient r1.\n### Sanitized text:"
    lm = _write(tmp_path / "samples_t_2026-01-01T00-00-00.jsonl", [_lmeval_row(0, records[0], raw, "p")])
    assert load_predictions(lm, records, task=task).report.postprocess == "testee"
    assert load_predictions(lm, records, task=task, postprocess="none")["r1"].output == raw
    # Our own sanitize file: `output` as stored, or the raw answer cleaned again with testee.
    ok = SanitizedOutput(id="r1", prompt_hash="h", raw_output="assistant\nagain", output="stored", model="m")
    own = _write(tmp_path / "sanitized.jsonl", [ok.to_dict()])
    assert load_predictions(own, records).report.postprocess == "none"
    assert load_predictions(own, records, answer_cue=CUE, postprocess="testee")["r1"].output == "again"
    with pytest.raises(DataError, match="unknown predictions post-processing 'raw'"):
        load_predictions(own, records, postprocess="raw")


def test_malformed_line_names_file_and_line(tmp_path, records):
    path = _write(tmp_path / "ref.jsonl", [{"id": "r1", "model_sanitized_text": "a"}, "", "{not json"])
    with pytest.raises(DataError, match=r"ref\.jsonl:3: invalid JSON"):
        load_predictions(path, records, answer_cue=CUE)


def test_line_of_another_format_is_an_error(tmp_path, records):
    path = _write(tmp_path / "ref.jsonl", [{"id": "r1", "model_sanitized_text": "a"}, {"id": "r2", "text": "b"}])
    with pytest.raises(DataError, match=r"ref\.jsonl:2: not a reference prediction line"):
        load_predictions(path, records, answer_cue=CUE)


def test_lmeval_row_without_doc_id_is_an_error(tmp_path, records):
    row = _lmeval_row(0, records[0], "x", "p")
    del row["doc"]["id"]
    path = _write(tmp_path / "samples.jsonl", [row])
    with pytest.raises(DataError, match=r"samples\.jsonl:1: lm-eval sample has no doc\.id"):
        load_predictions(path, records, answer_cue=CUE)


def test_duplicate_ids_rejected(tmp_path, records):
    path = _write(tmp_path / "ref.jsonl", [{"id": "r1", "model_sanitized_text": "a"}, {"id": "r2", "model_sanitized_text": "b"},
                                           {"id": "r1", "model_sanitized_text": "c"}])
    with pytest.raises(DataError, match=r"ref\.jsonl:3: duplicate prediction for record r1 \(first on line 1\)"):
        load_predictions(path, records, answer_cue=CUE)


def test_unknown_ids_warn_or_fail(tmp_path, records, caplog):
    path = _write(tmp_path / "ref.jsonl", [{"id": "r1", "model_sanitized_text": "a"}, {"id": "zzz", "model_sanitized_text": "b"}])
    with caplog.at_level(logging.WARNING):
        preds = load_predictions(path, records, answer_cue=CUE)
    assert preds.report.unknown == ["zzz"] and "zzz" not in preds
    assert any("not records of the task" in m for m in caplog.messages)
    assert any("have no prediction" in m for m in caplog.messages)
    with pytest.raises(DataError, match="not records of the task"):
        load_predictions(path, records, answer_cue=CUE, strict_ids=True)


def test_file_for_another_task_is_an_error(tmp_path, records):
    path = _write(tmp_path / "ref.jsonl", [{"id": "x1", "model_sanitized_text": "a"}, {"id": "x2", "model_sanitized_text": "b"}])
    with pytest.raises(DataError, match="wrong task or wrong file"):
        load_predictions(path, records, answer_cue=CUE)


def test_unrecognized_and_empty_files(tmp_path, records):
    with pytest.raises(DataError, match=r"x\.jsonl:1: unrecognized prediction format"):
        load_predictions(_write(tmp_path / "x.jsonl", [{"foo": 1}]), records, answer_cue=CUE)
    with pytest.raises(DataError, match="empty"):
        load_predictions(_write(tmp_path / "e.jsonl", []), records, answer_cue=CUE)
    with pytest.raises(DataError, match="cannot read predictions file"):
        load_predictions(tmp_path / "absent.jsonl", records, answer_cue=CUE)
    with pytest.raises(DataError, match="unknown predictions format"):
        load_predictions(tmp_path / "x.jsonl", records, format="csv")


def test_postprocessing_needs_the_answer_cue(tmp_path, records):
    path = _write(tmp_path / "ref.jsonl", [{"id": "r1", "model_sanitized_text": "a"}])
    assert load_predictions(path, records)["r1"].output == "a"  # verbatim: no cue needed
    with pytest.raises(DataError, match="answer cue"):
        load_predictions(path, records, postprocess="testee")


def test_detect_format_keys():
    assert detect_format({"doc_id": 0, "doc": {}, "resps": []}) == "lmeval"
    assert detect_format({"id": "a", "model_sanitized_text": "t"}) == "reference"
    assert detect_format({"id": "a", "prompt_hash": "h", "output": None}) == "sanitized"


def test_unscored_record_without_prediction_is_not_missing(tmp_path, records):
    from dataclasses import replace

    from privasis_bench.data.records import EXCLUDED_NO_KEEP

    unscored = replace(_record("r4"), keep=(), excluded_reason=EXCLUDED_NO_KEEP)
    path = _write(tmp_path / "ref.jsonl", [{"id": rid, "model_sanitized_text": "x"} for rid in ("r1", "r2", "r3")])
    preds = load_predictions(path, [*records, unscored], answer_cue=CUE)
    assert preds.report.missing == [] and preds["r4"].output is None


def test_sanitized_outputs_from_another_prompt_are_flagged(tmp_path, records, task):
    same = build_sanitize_request(records[0], task)
    rows = [SanitizedOutput(id="r1", prompt_hash=same.prompt_hash(), raw_output="a", output="a").to_dict(),
            SanitizedOutput(id="r2", prompt_hash="0" * 64, raw_output="b", output="b").to_dict()]
    preds = load_predictions(_write(tmp_path / "s.jsonl", rows), records, task=task)
    assert preds.report.prompt_mismatch == ["r2"]
    assert any("different prompt" in note for note in preds.report.warnings())


def test_predictions_for_excluded_records_are_reported_as_excluded_not_unknown(tmp_path, records):
    rows = [SanitizedOutput(id=i, prompt_hash="h", raw_output="x", output="x", model="m").to_dict() for i in ("r1", "gone")]
    path = _write(tmp_path / "sanitized.jsonl", rows)
    preds = load_predictions(path, records, excluded={"gone": "no_keep_attributes"})
    assert preds.report.unknown == [] and preds.report.excluded == ["gone"]
    (note,) = [n for n in preds.report.warnings() if "gone" in n]
    assert "excludes from scoring" in note and "no keep attributes" in note and "not records of the task" not in note
    assert preds.report.to_dict()["excluded"] == 1
    # an id that is in neither list is still unknown
    other = load_predictions(path, records)
    assert other.report.unknown == ["gone"]


def test_lmeval_answers_with_no_content_are_empty_outputs_under_the_preset(tmp_path, records, task, monkeypatch):
    """Issue 42: the paper's client reads an answer with no content as "", which its evaluator judges."""
    monkeypatch.setenv("LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER", "<none>")
    rows = [_lmeval_row(0, records[0], None, "p"), _lmeval_row(1, records[1], "<none>", "p"),
            _lmeval_row(2, records[2], "Patient r3.", "p")]
    path = _write(tmp_path / "samples_t_2026-01-01T00-00-00.jsonl", rows)
    harness = load_predictions(path, records, task=task)
    assert harness["r1"].error and harness["r2"].error and harness.report.failed == 2  # failed outputs, by default
    paper = load_predictions(path, records, task=task, null_as_empty=True)
    assert [paper[r].output for r in ("r1", "r2", "r3")] == ["", "", "Patient r3."]
    assert paper["r1"].ok and paper["r2"].ok and paper.report.failed == 0 and paper.report.empty == 2
    assert paper.report.null_as_empty == 2 and paper.report.to_dict()["null_as_empty"] == 2
    assert any("no content" in n and "judged" in n for n in paper.report.warnings())
