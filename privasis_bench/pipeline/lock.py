"""One writer per task directory: an exclusive OS file lock held while a command writes there.

Two processes writing the same ``<output>/<task>/`` would interleave their outputs and checkpoints, lose one's
results and pay every request twice. Each writing command (``run``, ``evaluate``, ``sanitize``) therefore holds
``fcntl.flock`` on ``<task dir>/.privasis-bench.lock`` while it works there; a second writer is refused at once
with one line naming the directory and the process holding it. The operating system drops the lock when its
holder exits in any way (also ``kill -9``), so a lock left by a killed run never blocks the next one.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from privasis_bench.errors import PrivasisError

LOCK_NAME = ".privasis-bench.lock"


class TaskDirBusyError(PrivasisError):
    """Another live process is writing the same task directory."""


@contextmanager
def task_dir_lock(task_dir: str | os.PathLike[str], command: str) -> Iterator[Path]:
    """Hold the task directory's lock for the duration of the ``with`` block (creates the directory)."""
    task_dir = Path(task_dir)
    task_dir.mkdir(parents=True, exist_ok=True)
    path = task_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # never truncated before the lock is ours
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TaskDirBusyError(
                f"{task_dir} is being written by another privasis-bench process ({_holder(fd)}); wait for it to "
                "finish or choose another --output"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": command}).encode())
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it (best effort)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return f"{info.get('command', 'a command')}, pid {info['pid']} on {info.get('host', '?')}"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "pid unknown"
