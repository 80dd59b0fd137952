"""The shipped lm-eval task files: they parse, build in lm-eval, and send exactly our prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from privasis_bench.cli import app
from privasis_bench.data.loading import load_records, with_data_files
from privasis_bench.interop.lmeval import (
    DocOptions,
    build_docs,
    lmeval_tasks_dir,
    messages_prompt_hash,
    nonempty_metric,
    sample_messages,
    shipped_names,
)
from privasis_bench.protocol.testee import build_sanitize_request
from privasis_bench.tasks.registry import load_task

LMEVAL_TASKS = shipped_names()[0]


def _row(rid: str, keep: bool) -> dict:
    return {
        "id": rid,
        "record_type": "Clinic reminder email",
        "original_record": f"Dear Lena Okafor ({rid}), your cleaning is on March 14, 2024. Call +1 555 0142.",
        "sanitized_record": "not used",
        "base_instruction": "- Drop the full name.\n- Generalize the date.",
        "smoothed_instruction": "Remove the name and make the date vague.",
        "attributes_to_drop": {"selected": {"full_name": "Lena Okafor"}, "group": False},
        "attributes_to_abstract": json.dumps({"selected": [{"attrs": {"appointment_date": "March 14, 2024"},
                                                            "group_name": "Appointment"}], "group": True}),
        "attributes_to_keep": {"clinic_phone": {"value": "+1 555 0142", "sanitization": "keep", "group_name": None}}
        if keep else {},
        "grouped_annotated_attributes": {"Patient": {"full_name": "Lena Okafor"}},
    }


@pytest.fixture()
def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    rows = [_row("a1", True), _row("a2", False), _row("a3", True)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class _AnyTagLoader(yaml.SafeLoader):
    pass


_AnyTagLoader.add_multi_constructor("!", lambda loader, suffix, node: f"!{suffix} {loader.construct_scalar(node)}")


def _lm_yaml(name: str) -> dict:
    return yaml.load((lmeval_tasks_dir() / f"{name}.yaml").read_text(encoding="utf-8"), Loader=_AnyTagLoader)


def test_the_shipped_names_are_read_from_the_task_files():
    assert shipped_names() == (("privasis_hard", "privasis_hard_validation", "privasis_sample", "privasis_vanilla",
                                "privasis_vanilla_validation"), ("privasis", "privasis_validation"))


def test_tasks_dir_holds_every_task_and_the_hooks():
    directory = lmeval_tasks_dir()
    assert (directory / "utils.py").is_file() and (directory / "privasis.yaml").is_file()
    for name in LMEVAL_TASKS:
        cfg = _lm_yaml(name)
        assert cfg["task"] == name and cfg["metadata"]["privasis_task"] == name


@pytest.mark.parametrize("name", LMEVAL_TASKS)
def test_generation_settings_match_our_task(name):
    """The lm-eval YAML asks for the same budget and temperature as privasis-bench's task of that name."""
    ours = load_task(name)
    gen = _lm_yaml(name)["generation_kwargs"]
    assert gen["max_gen_toks"] == ours.generation.max_tokens
    assert float(gen["temperature"]) == ours.generation.temperature
    assert gen["until"] == [] and gen["do_sample"] is False


def test_build_docs_uses_our_prompt_and_skips_unscored(rows_file):
    docs = build_docs(DocOptions.from_kwargs({"privasis_task": "privasis_vanilla", "data_files": str(rows_file),
                                              "version": 1.0, "base_url": "ignored"}))
    task = with_data_files(load_task("privasis_vanilla"), [str(rows_file)])
    records = {r.id: r for r in load_records(task).records}
    assert [d["id"] for d in docs] == ["a1", "a3"]  # a2 has no keep attribute: never scored
    for doc in docs:
        request = build_sanitize_request(records[doc["id"]], task)
        assert doc["prompt"] == request.messages[0][1]
        assert doc["prompt_hash"] == request.prompt_hash() == messages_prompt_hash(request.as_openai_messages())
        assert doc["instruction_variant"] == "base"
    smoothed = build_docs(DocOptions.from_kwargs({"privasis_task": "privasis_vanilla", "data_files": [str(rows_file)],
                                                  "instruction": "smoothed", "include_excluded": "true"}))
    assert [d["id"] for d in smoothed] == ["a1", "a2", "a3"]
    assert "Remove the name and make the date vague." in smoothed[0]["prompt"]


def test_doc_options_need_the_task_name():
    from privasis_bench.errors import PrivasisError

    with pytest.raises(PrivasisError, match="privasis_task"):
        DocOptions.from_kwargs({"version": 1.0})


def test_nonempty_metric_and_sample_messages():
    assert nonempty_metric({}, ["  text "]) == {"nonempty": 1.0}
    assert nonempty_metric({}, ["  \n"]) == {"nonempty": 0.0}
    messages = [{"role": "user", "content": "hi"}]
    assert sample_messages({"arguments": {"gen_args_0": {"arg_0": [json.dumps(messages)], "arg_1": {}}}}) == messages
    assert sample_messages({"arguments": {"gen_args_0": {"arg_0": json.dumps(messages), "arg_1": {}}}}) == messages
    assert sample_messages({"arguments": {"gen_args_0": {"arg_0": "plain prompt", "arg_1": {}}}}) == [
        {"role": "user", "content": "plain prompt"}]
    assert sample_messages({"arguments": {}}) is None


def test_lm_eval_builds_every_task(rows_file, monkeypatch):
    """lm-eval's own TaskManager builds each shipped task (hub tasks read local files via --metadata)."""
    pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    manager = TaskManager(include_path=str(lmeval_tasks_dir()), include_defaults=False,
                          metadata={"data_files": str(rows_file)})
    loaded = manager.load(["privasis", "privasis_validation"])
    assert sorted(loaded["group_map"]["privasis"]) == ["privasis_hard", "privasis_vanilla"]
    flat = loaded["tasks"]
    names = {t.config.task for t in flat.values()}
    assert names == {"privasis_vanilla", "privasis_hard", "privasis_vanilla_validation", "privasis_hard_validation"}
    for task_obj in flat.values():
        ours = with_data_files(load_task(task_obj.config.task), [str(rows_file)])
        records = {r.id: r for r in load_records(ours).records}
        docs = list(task_obj.eval_docs)
        assert [d["id"] for d in docs] == ["a1", "a3"]
        for doc in docs:
            assert task_obj.doc_to_text(doc) == build_sanitize_request(records[doc["id"]], ours).messages[0][1]
            assert task_obj.doc_to_target(doc) == ""
        assert task_obj.config.generation_kwargs["max_gen_toks"] == ours.generation.max_tokens


def test_cli_lm_eval_path(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["lm-eval-path"])
    assert result.exit_code == 0, result.output
    assert Path(result.output.strip()) == lmeval_tasks_dir()
    result = runner.invoke(app, ["lm-eval-path", "--command", "--base-url", "http://h:1/v1", "--model", "m"])
    assert result.exit_code == 0, result.output
    assert f"--include_path {lmeval_tasks_dir()}" in result.output
    assert "base_url=http://h:1/v1/chat/completions" in result.output and "--log_samples" in result.output
    target = tmp_path / "copy"
    result = runner.invoke(app, ["lm-eval-path", "--copy-to", str(target)])
    assert result.exit_code == 0, result.output
    assert Path(result.output.strip()) == target and (target / "utils.py").is_file()
    assert (target / "privasis_sample.yaml").read_text() == (lmeval_tasks_dir() / "privasis_sample.yaml").read_text()
    result = runner.invoke(app, ["lm-eval-path", "--help"])
    assert "lm_eval --include_path" in result.output
