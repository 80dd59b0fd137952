"""One writer per task directory, and no reader while it writes: an OS file lock on ``<task dir>/.privasis-bench.lock``.

Two processes writing the same ``<output>/<task>/`` would interleave their outputs and checkpoints, lose one's
results and pay every request twice; a command that reads a task directory while another writes it (``submit``,
``view``, ``near-verbatim``, ``compare``...) would publish or describe a state that is about to change. So:

* each writing command (``run``, ``evaluate``, ``sanitize``, ``rescore --write``) holds an exclusive
  ``fcntl.flock`` while it works there (:func:`task_dir_lock`); a second writer, or a writer while readers read,
  is refused at once with one line naming the directory and the holder (command, pid, host, since when);
* each reading command holds a shared lock (:func:`task_dir_read_lock`, :func:`read_locks`): readers never block
  each other, and a reader finding a writer at work waits up to ``wait`` seconds for it, then is refused the same
  way. The commands' readers never create the lock file, so a directory no writer ever used (a copied run, a
  submission folder, a read-only copy) is read as it is, and left as it was.

The operating system drops a lock when its holder exits in any way (also ``kill -9``), so a lock left by a killed
run never blocks the next one. A writer that takes the lock removes the temporary files that killed writers left
behind (:mod:`privasis_bench.pipeline.tempfiles`).
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from privasis_bench.errors import PrivasisError
from privasis_bench.pipeline.tempfiles import remove_stale_temp_files
from privasis_bench.results.files import task_dirs

LOCK_NAME = ".privasis-bench.lock"
#: How often a waiting reader tries the lock again.
POLL_S = 0.2


class TaskDirBusyError(PrivasisError):
    """Another live process is writing the same task directory (or reading it while this one wants to write)."""


@contextmanager
def task_dir_lock(task_dir: str | os.PathLike[str], command: str) -> Iterator[Path]:
    """Hold the task directory's exclusive lock for the ``with`` block (creates the directory).

    Once the lock is held, temporary files left by writers that were killed there are removed.
    """
    task_dir = Path(task_dir)
    task_dir.mkdir(parents=True, exist_ok=True)
    path = task_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # never truncated before the lock is ours
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TaskDirBusyError(_busy_message(task_dir, fd, "wait for it to finish or choose another --output")) from None
        _write_holder(fd, command, "write")
        remove_stale_temp_files(task_dir)
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextmanager
def task_dir_read_lock(task_dir: str | os.PathLike[str], command: str, *, wait: float = 0.0,
                       create: bool = True) -> Iterator[Path | None]:
    """Hold a shared lock on the task directory for the ``with`` block: no writer may start meanwhile.

    A writer at work is waited for up to ``wait`` seconds, then the command is refused with one line naming it.
    Yields the lock file, or None when there is nothing to lock (no such directory, a read-only one, or no lock
    file and ``create`` is false: a directory no privasis-bench writer ever used).
    """
    task_dir = Path(task_dir)
    fd = _open_for_reading(task_dir / LOCK_NAME, create=create) if task_dir.is_dir() else None
    if fd is None:
        yield None
        return
    try:
        deadline = time.monotonic() + max(0.0, wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TaskDirBusyError(_busy_message(task_dir, fd, f"re-run `{command}` once it has finished")) from None
                time.sleep(POLL_S)
        _write_holder(fd, command, "read")
        yield task_dir / LOCK_NAME
    finally:
        os.close(fd)


@contextmanager
def read_locks(task_dirs: Iterable[str | os.PathLike[str]], command: str, *, wait: float = 0.0,
               create: bool = False) -> Iterator[None]:
    """Shared locks on several task directories at once (each directory once), released together."""
    with ExitStack() as stack:
        for task_dir in dict.fromkeys(Path(d).resolve() for d in task_dirs):
            stack.enter_context(task_dir_read_lock(task_dir, command, wait=wait, create=create))
        yield


@contextmanager
def run_read_locks(paths: Iterable[str | os.PathLike[str]], command: str, *, wait: float = 0.0) -> Iterator[None]:
    """Shared locks on every task directory of the given runs (run directories, task directories or results files).

    Besides the task directories holding results, every sub-directory with a lock file is locked too: a task a
    writer is still producing for the first time has no results yet. No lock file is created (a directory no
    writer ever used has none, and none can be writing it). A path that names no run is left to the command,
    which says what is wrong with it.
    """
    dirs: list[Path] = []
    for path in map(Path, paths):
        try:
            dirs.extend(task_dirs(path))
        except PrivasisError:
            pass
        base = path.parent if path.is_file() else path
        if base.is_dir():
            dirs.extend(d.parent for d in [base / LOCK_NAME, *base.glob(f"*/{LOCK_NAME}")] if d.exists())
    with read_locks(dirs, command, wait=wait):
        yield


def lock_holder(task_dir: str | os.PathLike[str]) -> str | None:
    """Who holds the task directory's lock right now (None when nobody does, or there is no lock file)."""
    fd = _open_for_reading(Path(task_dir) / LOCK_NAME, create=False)
    if fd is None:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd)
        return None
    finally:
        os.close(fd)


def _open_for_reading(path: Path, create: bool = True) -> int | None:
    """A descriptor on the lock file (created when allowed), read-only when that is all we may; None without one."""
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None  # cannot be created here, so no writer can hold it


def _write_holder(fd: int, command: str, mode: str) -> None:
    """Say in the lock file who holds it (best effort: a read-only descriptor says nothing)."""
    info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "mode": mode,
            "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
    except OSError:
        pass


def _busy_message(task_dir: Path, fd: int, fix: str) -> str:
    holder, mode = _holder(fd), _mode(fd)
    doing = "read" if mode == "read" else "written"
    return f"{task_dir} is being {doing} by another privasis-bench process ({holder}); {fix}"


def _info(fd: int) -> dict:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return {}


def _mode(fd: int) -> str:
    return str(_info(fd).get("mode") or "write")


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it (best effort)."""
    info = _info(fd)
    if "pid" not in info:
        return "pid unknown"
    since = f", since {info['since']}" if info.get("since") else ""
    return f"{info.get('command', 'a command')}, pid {info['pid']} on {info.get('host', '?')}{since}"
