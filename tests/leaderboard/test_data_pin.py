"""Hub data pinned by content (issue 41): a local copy with the pinned ids but edited scored fields is refused,
naming the record; a faithful copy is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import privasis_bench.tasks.registry as registry
from privasis_bench.data.loading import load_records, with_data_files
from privasis_bench.leaderboard import data_source
from privasis_bench.leaderboard.data_pin import SCORED_FIELDS, content_hash, record_digest
from privasis_bench.leaderboard.task_source import shipped_task

TASK = shipped_task("privasis_vanilla")  # a hub task: verified from a local copy only


@pytest.fixture
def copy(tmp_path, monkeypatch) -> Path:
    """A local copy of the task (the bundled sample rows stand in for the hub split) pinned as it is."""
    sample = Path(registry.builtin_tasks_dir()) / "sample" / "privasis_sample.jsonl"
    path = tmp_path / "privasis_vanilla.jsonl"
    path.write_text(sample.read_text())
    pins = {TASK.task: data_source.local_pin(TASK, tmp_path)}
    monkeypatch.setattr(data_source, "pinned_data", lambda: pins)
    return path


def _edit(path: Path, index: int, edit) -> str:
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    edit(rows[index])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(load_records(with_data_files(TASK, [str(path)])).records[index].id)


def test_a_faithful_copy_is_read(copy):
    loaded, total = data_source.task_records(TASK, limit=None, directory=copy.parent)
    assert total == 29 and content_hash(loaded.records) == data_source.pinned_data()[TASK.task]["content_hash"]


def _drop_target(row: dict) -> None:
    selected = row["attributes_to_drop"]["selected"]
    attrs = selected[0]["attrs"] if isinstance(selected, list) else selected
    attrs[next(iter(attrs))] = "an edited value"


@pytest.mark.parametrize("edit", [
    lambda row: row.update(original_record=row["original_record"] + " (edited)"),
    lambda row: row.update(base_instruction="Keep everything."),
    _drop_target,
    lambda row: next(iter(row["attributes_to_keep"].values())).update(value="edited"),
], ids=["text", "instruction", "target", "keep"])
def test_an_edited_copy_with_the_same_ids_is_refused_naming_the_record(copy, edit):
    rid = _edit(copy, 3, edit)
    with pytest.raises(data_source.DataUnavailable,
                       match=rf"record {rid}: its scored fields .* differ from the pinned copy .*an edited copy"):
        data_source.task_records(TASK, limit=None, directory=copy.parent)


def test_an_edited_target_value_changes_the_record_digest():
    records = load_records(with_data_files(TASK, [str(Path(registry.builtin_tasks_dir()) / "sample" /
                                                      "privasis_sample.jsonl")])).records
    import dataclasses

    record = next(r for r in records if r.targets)
    edited = dataclasses.replace(record, targets=(dataclasses.replace(record.targets[0], value="someone else"),
                                                  *record.targets[1:]))
    assert edited.id == record.id and record_digest(edited) != record_digest(record)
    assert {"text", "targets", "keep", "base_instruction"} <= set(SCORED_FIELDS)
