"""Temporary files a killed writer left in a task directory, removed when the next writer takes the directory.

Every file a command writes atomically goes through a hidden temporary file named after the process that writes
it: ``.samples.jsonl.<pid>.tmp`` (results, samples, ledger, meta files), ``.sanitized.jsonl.<pid>.ordered.tmp``
(the output journal's ordered copy). A process stopped by ``kill -9`` (or a power cut) cannot remove its own, so
the writer that resumes the run removes those whose process is gone (:func:`remove_stale_temp_files`, called
under the task directory's exclusive lock); a file of a live process is never touched.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: ``.<file name>.<pid>.tmp`` or ``.<file name>.<pid>.<purpose>.tmp``
TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)(?:\.[A-Za-z_]+)?\.tmp$")


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    except OSError:
        return False
    return True


def stale_temp_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The temporary files in ``directory`` (not below) whose writing process no longer exists."""
    found: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return found
    for entry in entries:
        match = TEMP_NAME.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(match["pid"])
        if pid != os.getpid() and not pid_alive(pid):
            found.append(Path(entry.path))
    return sorted(found)


def remove_stale_temp_files(directory: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of dead processes in ``directory``; returns what was removed."""
    removed: list[Path] = []
    for path in stale_temp_files(directory):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            continue  # not ours to remove (permissions): left as it is
        removed.append(path)
    return removed
