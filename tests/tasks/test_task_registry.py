"""Task YAML loading: built-ins, includes, groups/tags, user files, and every error class."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from privasis_bench.errors import TaskConfigError
from privasis_bench.tasks.registry import build_index, builtin_tasks_dir, load_task, resolve_tasks

BUILTIN = {"privasis_vanilla", "privasis_hard", "privasis_vanilla_validation", "privasis_hard_validation", "privasis_sample"}


def test_builtin_tasks_and_group():
    index = build_index()
    assert BUILTIN <= set(index.tasks)
    assert "privasis" in index.groups
    assert [t.task for t in resolve_tasks(["privasis"])] == ["privasis_vanilla", "privasis_hard"]


def test_include_merges_and_overrides():
    vanilla = load_task("privasis_vanilla")
    assert vanilla.dataset.path == "nvidia/Privasis-Zero"
    assert (vanilla.dataset.name, vanilla.dataset.split) == ("vanilla", "test")
    assert vanilla.generation.max_tokens == 9024 and vanilla.generation.temperature == 0.0
    assert vanilla.judge.model == "openai:gpt-oss-120b"
    assert load_task("privasis_hard_validation").dataset.split == "validation"
    sample = load_task("privasis_sample")
    assert sample.judge.model == "llamacpp:smollm2"
    assert sample.dataset.path is None and Path(sample.dataset.data_files[0]).is_file()
    # template paths from the included base resolve relative to the base file
    assert Path(sample.prompt.template) == (builtin_tasks_dir() / "prompts" / "sanitize.txt").resolve()


def test_tags_resolve_and_comma_lists():
    assert {t.task for t in resolve_tasks(["privasis_validation"])} == {"privasis_vanilla_validation", "privasis_hard_validation"}
    assert [t.task for t in resolve_tasks(["privasis_sample,privasis_hard"])] == ["privasis_sample", "privasis_hard"]


def test_config_hash_changes_with_template_content(tmp_path):
    base = builtin_tasks_dir()
    user = _write(tmp_path, "mine.yaml", f"""
        task: mine
        include: {base / '_privasis_base.yaml'}
        dataset: {{path: null, data_files: {base / 'sample' / 'privasis_sample.jsonl'}}}
        prompt: {{template: p.txt, answer_cue: "###"}}
    """)
    (tmp_path / "p.txt").write_text("{instruction}\n{text}\n###")
    first = load_task(str(user)).config_hash()
    (tmp_path / "p.txt").write_text("{instruction}\n\n{text}\n###")
    assert load_task(str(user)).config_hash() != first


def _write(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


def _user_task(tmp_path: Path, body: str) -> Path:
    base = builtin_tasks_dir() / "_privasis_base.yaml"
    return _write(tmp_path, "user_task.yaml", f"task: user_task\ninclude: {base}\n" + textwrap.dedent(body))


def test_user_yaml_file_and_directory(tmp_path):
    path = _user_task(tmp_path, "dataset: {name: vanilla}\n")
    assert load_task(str(path)).task == "user_task"
    assert [t.task for t in resolve_tasks([str(tmp_path)])] == ["user_task"]
    assert [t.task for t in resolve_tasks(["user_task"], include_paths=[tmp_path])] == ["user_task"]


ERROR_CASES = [
    pytest.param("dataset: {name: vanilla}\nmetricz: {}\n", "metricz", "unknown key", id="unknown-top-level-key"),
    pytest.param("dataset: {name: vanilla, splitt: test}\n", "dataset.splitt", "unknown key", id="misspelled-nested-key"),
    pytest.param("generation: {max_tokens: lots}\n", "generation.max_tokens", "integer", id="wrong-type"),
    pytest.param("generation: {max_tokens: -3}\n", "generation.max_tokens", "greater than 0", id="out-of-range"),
    pytest.param("judge: {parse_mode: lenient}\n", "judge.parse_mode", "official", id="bad-enum"),
    pytest.param("prompt: {template: nowhere.txt}\n", "prompt.template", "template file not found", id="missing-template"),
    pytest.param("dataset: {path: null, data_files: nothing.jsonl}\n", "dataset.data_files", "data file not found", id="missing-data-file"),
    pytest.param("dataset: {path: null}\n", "dataset", "either dataset.path", id="no-source"),
    pytest.param("prompt: {template: [1, 2]}\n", "prompt.template", "file path", id="path-not-string"),
]


@pytest.mark.parametrize("body, key, message", ERROR_CASES)
def test_yaml_errors_name_file_and_key(tmp_path, body, key, message):
    path = _user_task(tmp_path, body)
    with pytest.raises(TaskConfigError) as info:
        load_task(str(path))
    assert info.value.key == key
    assert str(path) in str(info.value) and message in str(info.value)


def test_missing_required_key(tmp_path):
    path = _write(tmp_path, "t.yaml", "task: t\nversion: 1\n")
    with pytest.raises(TaskConfigError, match="required key is missing"):
        load_task(str(path))


def test_invalid_yaml_syntax(tmp_path):
    path = _write(tmp_path, "t.yaml", "task: t\ndataset: {name: [unclosed\n")
    with pytest.raises(TaskConfigError, match="invalid YAML") as info:
        load_task(str(path))
    assert info.value.file == str(path)


def test_top_level_not_mapping(tmp_path):
    with pytest.raises(TaskConfigError, match="must be a mapping"):
        load_task(str(_write(tmp_path, "t.yaml", "- a\n- b\n")))


def test_missing_include(tmp_path):
    path = _write(tmp_path, "t.yaml", "task: t\ninclude: nope.yaml\n")
    with pytest.raises(TaskConfigError, match="included file not found") as info:
        load_task(str(path))
    assert info.value.key == "include"


def test_include_cycle(tmp_path):
    _write(tmp_path, "a.yaml", "include: b.yaml\n")
    _write(tmp_path, "b.yaml", "include: a.yaml\n")
    with pytest.raises(TaskConfigError, match="too deeply"):
        load_task(str(tmp_path / "a.yaml"))


def test_missing_task_file_and_unknown_name():
    with pytest.raises(TaskConfigError, match="not found"):
        resolve_tasks(["does/not/exist.yaml"])
    with pytest.raises(TaskConfigError, match="Did you mean: privasis_vanilla"):
        resolve_tasks(["privasis_vanila"])


def test_group_unknown_member(tmp_path):
    _write(tmp_path, "g.yaml", "group: g\ntask: [privasis_sample, nope_task]\n")
    with pytest.raises(TaskConfigError, match="nope_task"):
        resolve_tasks(["g"], include_paths=[tmp_path])
