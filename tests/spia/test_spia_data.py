"""The SPIA tasks' data: the pinned file fetched from a local stand-in of GitHub's raw-file host (checked by sha256,
cached), one line offline, local copies through --data-files, and a bad row named by file and line.

The files served here are rows of the bundled sample (copied from maisonOP/spia at the pinned commit; MIT for the
TAB-derived rows, CC BY 4.0 for the PANORAMA-derived ones: tasks/spia/NOTICE.md) in the official schema."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import socket
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_main import run_main

from privasis_bench.errors import DataError
from privasis_bench.spia import source
from privasis_bench.spia.scorer import SpiaScorer
from privasis_bench.tasks.paths import builtin_tasks_dir
from privasis_bench.tasks.registry import parse_task_file

SAMPLE = builtin_tasks_dir() / "spia" / "spia_sample.jsonl"
TASKS = {"spia_tab": "data/spia/spia_tab_144.jsonl", "spia_panorama": "data/spia/spia_panorama_151.jsonl",
         "spia_panorama_full": "data/spia/spia_panorama_531.jsonl"}
SPANS = {"spia_tab": "data/entity/entity_tab_144.jsonl", "spia_panorama": "data/entity/entity_panorama_151.jsonl",
         "spia_panorama_full": "data/entity/entity_panorama_151.jsonl"}


def span_row(line: str) -> str:
    """A span-file row in SPIA's entity schema for a sample document: its first capitalised word a DIRECT mention,
    every number a QUASI one (made up here: the sample ships no span annotations)."""
    row = json.loads(line)
    text = row["text"]
    found = [("DIRECT", m) for m in list(re.finditer(r"\b[A-Z][a-z]+\b", text))[:1]]
    found += [("QUASI", m) for m in re.finditer(r"\d+", text)]
    entities = [{"span_text": m.group(0), "entity_type": "MISC", "start_offset": m.start(), "end_offset": m.end(),
                 "entity_id": f"e{i}", "span_id": f"m{i}", "identifier_type": kind, "annotator": "test"}
                for i, (kind, m) in enumerate(found)]
    return json.dumps({"metadata": row["metadata"], "text": text, "entities": entities})


def _rows(prefix: str) -> list[str]:
    return [line for line in SAMPLE.read_text(encoding="utf-8").splitlines() if f'"data_id": "{prefix}' in line]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture
def raw_host(tmp_path, monkeypatch):
    """A local raw-file host serving ``<root>/maisonOP/spia/<commit>/data/spia/*.jsonl`` (TAB rows for the TAB file,
    PANORAMA rows for the two PANORAMA files), and a fresh cache directory."""
    root = tmp_path / "host"
    folder = root / source.REPOSITORY / source.COMMIT / "data" / "spia"
    folder.mkdir(parents=True)
    for name in TASKS.values():
        rows = _rows("TAB-") if "tab" in name else _rows("PANORAMA-")
        (folder / Path(name).name).write_text("\n".join(rows) + "\n", encoding="utf-8")
    spans = root / source.REPOSITORY / source.COMMIT / "data" / "entity"
    spans.mkdir(parents=True)
    for prefix, name in (("TAB-", "entity_tab_144.jsonl"), ("PANORAMA-", "entity_panorama_151.jsonl")):
        (spans / name).write_text("".join(span_row(x) + "\n" for x in _rows(prefix)), encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(source.RAW_HOST_ENV, f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / "cache"))
    yield folder
    server.shutdown()
    server.server_close()


def _task(name: str, **args):
    task = parse_task_file(builtin_tasks_dir() / f"{name}.yaml")
    return task.model_copy(update={"scorer_args": {**task.scorer_args, **args}}) if args else task


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_each_task_pins_the_official_file_at_a_full_commit():
    for name, file in TASKS.items():
        task = _task(name)
        assert (task.dataset.path, task.dataset.revision, task.dataset.name) == (source.REPOSITORY, source.COMMIT, file)
        assert len(task.scorer_args["data_sha256"]) == 64 and len(task.scorer_args["span_sha256"]) == 64
        assert task.scorer_args["span_file"] == SPANS[name]
    assert "not comparable with tab_test" in " ".join(_task("spia_tab").description.split())


@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_pinned_files_are_fetched_checked_and_cached(raw_host, name):
    served = raw_host / Path(TASKS[name]).name
    served_spans = raw_host.parent / "entity" / Path(SPANS[name]).name
    digests = {"data_sha256": _digest(served), "span_sha256": _digest(served_spans)}
    scorer = SpiaScorer(_task(name, **digests))
    cached, cached_spans = map(Path, scorer.data_files())
    assert cached.parent == source.cache_root() / source.COMMIT and cached.read_bytes() == served.read_bytes()
    assert cached_spans.read_bytes() == served_spans.read_bytes() and set(scorer.spans) == set(scorer.documents)
    assert [r.id for r in scorer.records()] == [json.loads(x)["metadata"]["data_id"] for x in served.read_text().splitlines()]
    served.write_text("changed on the host\n")  # the second scorer reads the cache, not the host
    assert SpiaScorer(_task(name, **digests)).data_files() == [str(cached), str(cached_spans)]


def test_a_file_that_is_not_the_pinned_one_is_refused(raw_host):
    with pytest.raises(DataError, match=r"sha256 is .*, the task pins 000000000000\.\.\.: not the pinned data"):
        SpiaScorer(_task("spia_tab", data_sha256="0" * 64))
    assert not list(source.cache_root().rglob("*.jsonl"))  # nothing unchecked is cached


def test_offline_the_fetch_fails_at_once_with_one_line(tmp_path, monkeypatch, capsys):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv(source.RAW_HOST_ENV, f"http://127.0.0.1:{port}")
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = run_main(["data", "inspect", "-t", "spia_tab"], monkeypatch, capsys)
    message = (out + err).strip()
    assert code != 0 and "\n" not in message, message
    assert "cannot fetch SPIA's data/spia/spia_tab_144.jsonl" in message
    assert "github.com/maisonOP/spia at commit 3fa78a1" in message and "--data-files PATH" in message


def test_a_missing_file_on_the_host_is_one_line(raw_host):
    (raw_host / "spia_panorama_151.jsonl").unlink()
    with pytest.raises(DataError, match=r"\(HTTP 404\): download .*pass it with --data-files PATH$"):
        SpiaScorer(_task("spia_panorama", data_sha256=None))


def test_local_copies_in_the_official_schema_through_data_files(tmp_path, monkeypatch, capsys):
    local = tmp_path / "spia_panorama_151.jsonl"
    local.write_text("\n".join(_rows("PANORAMA-")) + "\n", encoding="utf-8")
    monkeypatch.setenv(source.RAW_HOST_ENV, "http://127.0.0.1:9")  # never asked
    code, out, err = run_main(["data", "inspect", "-t", "spia_panorama", "--data-files", str(local), "--json"],
                              monkeypatch, capsys)
    assert code == 0, out + err
    stats = json.loads(out)
    assert stats["task"] == "spia_panorama" and stats["documents"] == 3 and stats["subjects"] > 3


def test_a_bad_row_is_one_error_naming_file_and_line(tmp_path, monkeypatch, capsys):
    rows = _rows("TAB-")
    broken = json.loads(rows[1])
    broken["subjects"][0]["PIIs"][0]["certainty"] = 7
    local = tmp_path / "spia_tab_144.jsonl"
    local.write_text(rows[0] + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    code, out, err = run_main(["data", "inspect", "-t", "spia_tab", "--data-files", str(local)], monkeypatch, capsys)
    message = (out + err).strip()
    assert code != 0 and "\n" not in message
    assert f"{local}:2: subjects[0].PIIs[0].certainty: 7 is outside 0-5" in message


def test_a_revision_that_is_not_a_commit_is_refused():
    task = _task("spia_tab")
    moving = task.model_copy(update={"dataset": task.dataset.model_copy(update={"revision": "main"})})
    with pytest.raises(DataError, match="full 40-digit commit sha"):
        SpiaScorer(moving)


def test_tasks_list_names_the_pinned_source_without_fetching():
    assert SpiaScorer.data_source(_task("spia_panorama_full")) == (
        "github.com/maisonOP/spia@3fa78a1 data/spia/spia_panorama_531.jsonl (fetched once and cached, or --data-files)")


def test_a_run_on_the_cached_copy_still_records_the_pinned_repository_and_commit(raw_host, tmp_path):
    served = raw_host / Path(TASKS["spia_panorama"]).name
    served_spans = raw_host.parent / "entity" / Path(SPANS["spia_panorama"]).name
    digests = {"data_sha256": _digest(served), "span_sha256": _digest(served_spans)}
    task = _task("spia_panorama", **digests)
    files = SpiaScorer(task).data_files()
    # the CLI reads the fetched copies as local files (the task's repository and commit are dropped from it)
    on_cache = task.model_copy(update={"dataset": task.dataset.model_copy(
        update={"data_files": files, "path": None, "revision": None})})
    described = SpiaScorer(on_cache).describe()
    assert described["data_origin"] == [
        {"repository": source.REPOSITORY, "commit": source.COMMIT, "path": TASKS["spia_panorama"], "sha256": _digest(served)},
        {"repository": source.REPOSITORY, "commit": source.COMMIT, "path": SPANS["spia_panorama"],
         "sha256": _digest(served_spans)}]
    own = tmp_path / "mine.jsonl"  # a user's copy (or a cached copy changed since): no pin is claimed
    own.write_bytes(Path(files[0]).read_bytes())
    mine = task.model_copy(update={"dataset": task.dataset.model_copy(update={"data_files": [str(own)], "path": None})})
    assert "data_origin" not in SpiaScorer(mine).describe()
    Path(files[0]).write_text(Path(files[0]).read_text("utf-8").splitlines()[0] + "\n", "utf-8")
    assert [o["path"] for o in SpiaScorer(on_cache).describe()["data_origin"]] == [SPANS["spia_panorama"]]
