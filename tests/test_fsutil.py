"""fsutil.AppendLog: a line cut short by a crash is cut off before appending; lines are flushed as written."""

from __future__ import annotations

import pytest

from privasis_bench.fsutil import AppendLog, drop_partial_line


@pytest.mark.parametrize("before, after", [
    ("", "new\n"),
    ("a\n", "a\nnew\n"),
    ("a\nhalf", "a\nnew\n"),  # the crash's half line is dropped, the finished ones stay
    ("half only", "new\n"),
    ("a\n" + "x" * 200_000, "a\nnew\n"),  # the cut line is longer than the first block searched
])
def test_append_log_drops_a_cut_last_line_and_flushes_each_write(tmp_path, before, after):
    path = tmp_path / "log.jsonl"
    path.write_text(before, encoding="utf-8")
    log = AppendLog(path, sync_every=3600)
    log.write("new\n")
    assert path.read_text(encoding="utf-8") == after  # flushed at once, before any fsync or close
    log.close()
    log.close()  # idempotent


def test_drop_partial_line_leaves_a_missing_file_alone(tmp_path):
    drop_partial_line(tmp_path / "absent.jsonl")
    assert not (tmp_path / "absent.jsonl").exists()
