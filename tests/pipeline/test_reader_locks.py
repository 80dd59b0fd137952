"""Issue 34 point 3: every command that reads a run directory respects the task-directory lock.

While a writer works in a task directory, readers (view, near-verbatim, linkage, submit, rescore, compare,
agreement, evaluate of its outputs) are refused with one line naming the holder (command, pid, since) and write
nothing; a reader holds a shared lock, so a writer cannot start while it reads, and readers never block each other.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import REPO_ROOT

from privasis_bench.pipeline.lock import LOCK_NAME, TaskDirBusyError, lock_holder, task_dir_lock, task_dir_read_lock

TASK = "privasis_sample"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A small finished run (identity model, no judge)."""
    base = tmp_path_factory.mktemp("locks")
    mp = pytest.MonkeyPatch()
    try:
        from privasis_bench.cli import main

        mp.setattr(sys, "argv", ["privasis-bench", "run", "-m", "identity", "-t", TASK, "--judge", "none", "--limit", "3",
                                 "-o", str(base / "run"), "--no-progress", "--bootstrap-samples", "20",
                                 "--cache-dir", str(base / "cache")])
        try:
            main()
        except SystemExit as exc:
            assert not exc.code
    finally:
        mp.undo()
    return base / "run"


def _holder(code: str) -> subprocess.Popen:
    """A Python process that runs ``code``, prints "ready" and then waits to be killed."""
    script = textwrap.dedent(code) + "\nprint('ready', flush=True)\nimport time\ntime.sleep(120)\n"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _writer(task_dir: Path, command: str = "run") -> subprocess.Popen:
    return _holder(f"""
        from privasis_bench.pipeline.lock import task_dir_lock
        lock = task_dir_lock({str(task_dir)!r}, {command!r})
        lock.__enter__()
    """)


def _reader(task_dir: Path, command: str = "view") -> subprocess.Popen:
    return _holder(f"""
        from privasis_bench.pipeline.lock import task_dir_read_lock
        lock = task_dir_read_lock({str(task_dir)!r}, {command!r})
        lock.__enter__()
    """)


def _stop(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)


READERS = {  # command -> argv ({run}: the run directory, {tmp}: a scratch directory); and what it would write
    "view": (["view", "{run}"], "{run}/privasis_sample/view.html"),
    "near-verbatim": (["near-verbatim", "{run}"], "{run}/privasis_sample/near_verbatim.json"),
    "linkage": (["linkage", "{run}"], "{run}/privasis_sample/linkage.json"),
    "submit": (["submit", "{run}", "--name", "org/model", "--submissions-dir", "{tmp}/subs"], "{tmp}/subs"),
    "rescore": (["rescore", "{run}"], None),
    "rescore --write": (["rescore", "{run}", "--write"], None),
    "compare": (["compare", "{run}", "{run}", "--json", "{tmp}/c.json"], "{tmp}/c.json"),
    "agreement": (["agreement", "{run}/privasis_sample", "{run}", "--json", "{tmp}/a.json"], "{tmp}/a.json"),
    "evaluate": (["evaluate", "-p", "{run}/privasis_sample/sanitized.jsonl", "-t", TASK, "--judge", "none", "--limit",
                  "3", "-o", "{tmp}/eval", "--no-progress", "--bootstrap-samples", "20"], "{tmp}/eval/privasis_sample"),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_reader_is_refused_while_a_writer_works_and_writes_nothing(name, finished_run, tmp_path, monkeypatch, capsys):
    argv, would_write = READERS[name]
    task_dir = finished_run / TASK
    before = {p.name: p.read_bytes() for p in task_dir.iterdir() if p.is_file() and p.name != LOCK_NAME}
    writer = _writer(task_dir)
    try:
        code, out, err = run_main([a.format(run=finished_run, tmp=tmp_path) for a in argv], monkeypatch, capsys)
    finally:
        _stop(writer)
    assert code == 2, (out, err)
    lines = [line for line in (out + err).splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, lines
    assert "being written by another privasis-bench process" in lines[0] and str(task_dir) in lines[0]
    assert f"run, pid {writer.pid}" in lines[0] and "since 20" in lines[0]  # the holder: command, pid, since when
    if would_write:
        assert not Path(would_write.format(run=finished_run, tmp=tmp_path)).exists()
    after = {p.name: p.read_bytes() for p in task_dir.iterdir() if p.is_file() and p.name != LOCK_NAME}
    assert after == before  # the run directory is untouched
    # once the writer is gone, the same command works
    code, out, err = run_main([a.format(run=finished_run, tmp=tmp_path) for a in argv], monkeypatch, capsys)
    # exit 1: agreement/compare findings; submit then refuses the fixture's 20-sample bootstrap as verify would (exit 2)
    assert code in ((0, 1, 2) if name == "submit" else (0, 1)) and "being written" not in out + err, (out, err)


def test_a_writer_is_refused_while_a_reader_reads_and_readers_share(finished_run, tmp_path, monkeypatch, capsys):
    task_dir = finished_run / TASK
    reader = _reader(task_dir, "submit")
    try:
        with pytest.raises(TaskDirBusyError) as err:
            with task_dir_lock(task_dir, "run"):
                pass
        message = str(err.value)
        assert "being read by another privasis-bench process" in message and f"submit, pid {reader.pid}" in message
        assert lock_holder(task_dir) is not None and f"pid {reader.pid}" in lock_holder(task_dir)
        code, out, err_text = run_main(["rescore", str(finished_run)], monkeypatch, capsys)  # readers share
        assert code == 0, (out, err_text)
    finally:
        _stop(reader)
    assert lock_holder(task_dir) is None
    with task_dir_lock(task_dir, "run"):  # the killed reader's lock went with it
        pass


def test_a_reader_waits_for_a_writer_when_asked(tmp_path):
    task_dir = tmp_path / "t"
    writer = _writer(task_dir)
    got: dict[str, object] = {}

    def read() -> None:
        try:
            with task_dir_read_lock(task_dir, "view", wait=60) as path:
                got["path"] = path
        except Exception as exc:  # noqa: BLE001 - reported below
            got["error"] = exc

    thread = threading.Thread(target=read)
    thread.start()
    try:
        assert lock_holder(task_dir) is not None and "got" not in got
    finally:
        _stop(writer)
    thread.join(timeout=30)
    assert got.get("path") == task_dir / LOCK_NAME, got


def test_reading_a_copied_run_leaves_no_lock_file(finished_run, tmp_path, monkeypatch, capsys):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(finished_run, copy, ignore=shutil.ignore_patterns(LOCK_NAME))
    for argv in (["rescore", str(copy)], ["view", str(copy)], ["compare", str(copy), str(finished_run)]):
        code, out, err = run_main(argv, monkeypatch, capsys)
        assert code == 0, (argv, out, err)
    assert not (copy / TASK / LOCK_NAME).exists()


def test_a_reader_without_a_lock_file_does_not_create_one_when_told_not_to(tmp_path):
    with task_dir_read_lock(tmp_path, "evaluate", create=False) as path:
        assert path is None
    assert not (tmp_path / LOCK_NAME).exists()
    with task_dir_read_lock(tmp_path / "missing", "view") as path:
        assert path is None
