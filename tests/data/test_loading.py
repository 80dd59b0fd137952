"""Loading rows from local files and the hub; skipping invalid rows; the bundled sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from privasis_bench.data.loading import load_records, with_data_files
from privasis_bench.errors import DataError
from privasis_bench.tasks.registry import load_task

ATTR_COLUMNS = ("attributes_to_drop", "attributes_to_abstract", "attributes_to_keep", "grouped_annotated_attributes")


@pytest.fixture(scope="module")
def sample_task():
    return load_task("privasis_sample")


@pytest.fixture(scope="module")
def sample_rows(sample_task):
    path = sample_task.dataset.data_files[0]
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _as_json_strings(rows):
    """The hub form: every attribute column as a JSON string (what parquet holds)."""
    out = []
    for row in rows:
        row = dict(row)
        for column in ATTR_COLUMNS:
            if not isinstance(row.get(column), str):
                row[column] = json.dumps(row.get(column))
        out.append(row)
    return out


def test_sample_loads_with_excluded_records(sample_task):
    loaded = load_records(sample_task)
    assert len(loaded.records) >= 24
    assert loaded.excluded, "the sample must contain records without keep attributes"
    assert len(loaded.scored) + len(loaded.excluded) == len(loaded.records)
    assert len({r.id for r in loaded.records}) == len(loaded.records)


def test_jsonl_json_parquet_give_identical_records(tmp_path, sample_task, sample_rows):
    rows = _as_json_strings(sample_rows)
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    as_json = tmp_path / "rows.json"
    as_json.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    parquet = tmp_path / "rows.parquet"
    pd.DataFrame(rows).to_parquet(parquet)

    loaded = [load_records(with_data_files(sample_task, [str(p)])).records for p in (jsonl, as_json, parquet)]
    assert loaded[0] == loaded[1] == loaded[2]
    # and the mixed object/string original normalizes to the same records as the all-string form
    assert load_records(sample_task).records == loaded[0]


def test_limit(sample_task):
    assert [r.id for r in load_records(sample_task, limit=3).records] == [r.id for r in load_records(sample_task).records[:3]]


def _write_rows(tmp_path, rows):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_invalid_row_stops_or_is_skipped(tmp_path, sample_task, sample_rows):
    bad = dict(sample_rows[1], attributes_to_drop="{broken")
    path = _write_rows(tmp_path, [sample_rows[0], bad, sample_rows[2]])
    task = with_data_files(sample_task, [str(path)])
    with pytest.raises(DataError, match=f"record '{bad['id']}': field 'attributes_to_drop'"):
        load_records(task)
    loaded = load_records(task, skip_invalid=True)
    assert [r.id for r in loaded.records] == [sample_rows[0]["id"], sample_rows[2]["id"]]
    assert [(i.row_number, i.record_id, i.field) for i in loaded.invalid] == [(2, bad["id"], "attributes_to_drop")]


def test_duplicate_ids_are_invalid(tmp_path, sample_task, sample_rows):
    path = _write_rows(tmp_path, [sample_rows[0], sample_rows[0]])
    with pytest.raises(DataError, match="duplicate id"):
        load_records(with_data_files(sample_task, [str(path)]))


def test_bad_json_line_names_file_and_line(tmp_path, sample_task, sample_rows):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(sample_rows[0]) + "\n{oops\n")
    with pytest.raises(DataError, match=r"rows.jsonl:2: invalid JSON"):
        load_records(with_data_files(sample_task, [str(path)]))


def test_missing_local_file(sample_task):
    with pytest.raises(DataError, match="file not found"):
        with_data_files(sample_task, ["/nonexistent/x.parquet"])


def test_hub_offline_fails_fast_with_help(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    # timing is measured by benchmarks/hub_failfast.py; here: the outcome and that no network is tried
    proc = subprocess.run(
        [sys.executable, "-m", "privasis_bench", "data", "inspect", "--tasks", "privasis_vanilla"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    assert "nvidia/Privasis-Zero" in message and "HF_HOME" in message and "--data-files" in message
    assert "[vanilla/test]" in message  # printed literally, not eaten as console markup


def test_hub_unreachable_endpoint_fails_fast(tmp_path, sample_task):
    """Without HF_HUB_OFFLINE, an unreachable endpoint is detected by a short probe, not a long hang."""
    env = dict(os.environ, HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"))
    env.pop("HF_HUB_OFFLINE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "privasis_bench", "data", "inspect", "--tasks", "privasis_hard"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 2
    assert "unreachable" in proc.stderr


def test_hub_loader_on_a_local_copy_of_the_dataset_repo(tmp_path, sample_task, sample_rows, monkeypatch):
    """The hub code path (`datasets.load_dataset(path, name, split, revision)`) on a local directory laid out like
    the Privasis-Zero repository: per-config parquet files declared in the README's `configs:` metadata."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    repo = tmp_path / "Privasis-Zero"
    repo.mkdir()
    rows = _as_json_strings(sample_rows)
    pd.DataFrame(rows[:5]).to_parquet(repo / "vanilla_test.parquet")
    pd.DataFrame(rows[5:8]).to_parquet(repo / "vanilla_valid.parquet")
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: vanilla\n  data_files:\n  - split: test\n    path: vanilla_test.parquet\n"
        "  - split: validation\n    path: vanilla_valid.parquet\n---\n"
    )
    vanilla = load_task("privasis_vanilla")
    for split, expected in (("test", rows[:5]), ("validation", rows[5:8])):
        dataset = vanilla.dataset.model_copy(update={"path": str(repo), "revision": None, "split": split})
        loaded = load_records(vanilla.model_copy(update={"dataset": dataset}))
        assert [r.id for r in loaded.records] == [row["id"] for row in expected]


def test_offline_mode_never_touches_the_network(monkeypatch):
    import socket

    from privasis_bench.data import loading as data

    def refuse(*args, **kwargs):
        raise AssertionError("network probe attempted in offline mode")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert data.hub_reachable() is False


def test_probe_uses_a_short_timeout(monkeypatch):
    import socket

    from privasis_bench.data import loading as data

    seen = {}

    def fake_connect(address, timeout=None):
        seen.update(address=address, timeout=timeout)
        raise OSError("unreachable")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example.org")
    monkeypatch.setattr(socket, "create_connection", fake_connect)
    assert data.hub_reachable() is False
    assert seen == {"address": ("hub.example.org", 443), "timeout": data.HUB_PROBE_TIMEOUT_S}
