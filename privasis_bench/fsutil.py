"""Reading text files and preparing output directories, with one-line errors that name the file.

Every file a user hands us (data, task YAML, templates, predictions) is read through :func:`read_text`, so a
file that is not UTF-8 text is reported with its name, the byte offset and line of the first bad byte; every
directory a command writes into is checked up front by :func:`ensure_dir`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

from privasis_bench.errors import DataError


class FileProblem(DataError):
    """A file or directory cannot be read or written as needed."""


def refuse_special_file(path: str | os.PathLike[str], what: str = "file") -> None:
    """One clear line for a FIFO, socket or device given as ``path``: reading one could block forever.

    A missing path passes (the read that follows names it); only what exists and is neither a regular file nor a
    directory is refused.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise FileProblem(f"{path}: is {kind}, not a regular file; expected a {what} saved on disk")


def read_text(path: str | os.PathLike[str], what: str = "file", *, max_bytes: int | None = None) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable, special (FIFO, device), binary or non-UTF-8 file, or one
    larger than ``max_bytes``, raises one clear line."""
    refuse_special_file(path, what)
    try:
        if max_bytes is not None and os.path.getsize(path) > max_bytes:
            raise FileProblem(f"{path}: {os.path.getsize(path):,} bytes, more than the {max_bytes:,} a {what} may have")
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise FileProblem(f"{path}: is a directory, expected a {what}") from None
    except OSError as exc:
        raise FileProblem(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise FileProblem(f"{path}: UTF-16 text (it starts with a UTF-16 byte-order mark); save the {what} as UTF-8")
    if b"\x00" in data[:8192]:
        raise FileProblem(f"{path}: looks like a binary file, expected a UTF-8 text {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileProblem(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line}); "
            f"save the {what} as UTF-8"
        ) from None


def strip_one_newline(text: str) -> str:
    """``text`` without exactly one trailing newline (``\\n`` or ``\\r\\n``), as common template engines load a file.

    A template saved by an editor ends with a newline its author did not mean as part of the prompt; a template
    that ends with a blank line on purpose keeps one newline.
    """
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


#: Template files already reported as saved with Windows line ends (one notice per file and process).
_CRLF_REPORTED: set[str] = set()


def read_template_text(path: str | os.PathLike[str], what: str = "prompt template") -> str:
    """A prompt template's text: :func:`read_text` with Windows line ends (CRLF) read as LF, minus exactly one
    trailing newline (:func:`strip_one_newline`).

    Every prompt template (testee, judge, recipe steps) is loaded through this one function, so a template saved
    on Windows sends the very prompts its LF copy sends (and hashes alike); the first time a file is read so, one
    warning line names it.
    """
    text = read_text(path, what)
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
        key = str(Path(path).resolve())
        if key not in _CRLF_REPORTED:
            _CRLF_REPORTED.add(key)
            logging.getLogger(__name__).warning(
                "%s: %s saved with Windows line ends (CRLF); read with LF line ends, so its prompts are those of the "
                "LF file", path, what)
    return strip_one_newline(text)


def ensure_dir(path: str | os.PathLike[str], option: str) -> Path:
    """Create ``path`` if needed and check it is a writable directory; ``option`` names it in errors."""
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise FileProblem(f"{option} {directory}: is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise FileProblem(f"{option} {directory}: cannot create it, a part of the path is a file") from None
    except OSError as exc:
        raise FileProblem(f"{option} {directory}: cannot create it ({exc.strerror or exc})") from None
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-check-"):
            pass
    except OSError as exc:
        raise FileProblem(f"{option} {directory}: cannot write there ({exc.strerror or exc})") from None
    return directory


class AppendLog:
    """A JSON-lines file that finished work is appended to, one line at a time, as it happens.

    Each line is flushed at once, so a crash or kill of this process loses nothing that was written. Lines are
    fsynced in groups, at most ``sync_every`` seconds apart, and on :meth:`close` (so a power cut loses at most
    that much), instead of paying one fsync per line, which would stall a busy run. A last line left incomplete
    by an earlier crash is cut off before appending (see :func:`drop_partial_line`).
    """

    def __init__(self, path: str | os.PathLike[str], *, sync_every: float = 0.25) -> None:
        self.path, self.sync_every, self._clock = Path(path), sync_every, time.monotonic
        self.path.parent.mkdir(parents=True, exist_ok=True)
        drop_partial_line(self.path)
        self._fh = open(self.path, "a", encoding="utf-8")
        self._synced = self._clock()
        self._dirty = False

    def write(self, text: str) -> None:
        """Append ``text`` (whole lines, each ending in a newline) and flush it."""
        self._fh.write(text)
        self._fh.flush()
        self._dirty = True
        if self._clock() - self._synced >= self.sync_every:
            self.sync()

    def sync(self) -> None:
        """fsync what was written so far."""
        if self._dirty and not self._fh.closed:
            os.fsync(self._fh.fileno())
            self._dirty = False
        self._synced = self._clock()

    def close(self) -> None:
        """fsync and close (idempotent)."""
        if not self._fh.closed:
            self.sync()
            self._fh.close()


def drop_partial_line(path: Path) -> None:
    """Cut a last line left without its newline by a crash (appending after it would spoil the next line)."""
    try:
        with open(path, "rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            block = min(size, 1 << 16)
            while True:
                fh.seek(size - block)
                data = fh.read(block)
                cut = data.rfind(b"\n")
                if cut >= 0 or block == size:
                    fh.truncate(size - block + cut + 1 if cut >= 0 else 0)
                    return
                block = min(size, block * 2)
    except FileNotFoundError:
        return


def iter_text_lines(path: str | os.PathLike[str], what: str = "file") -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of a UTF-8 file, read one line at a time (for files too large to hold).

    Problems are reported as :func:`read_text` reports them: a missing or unreadable file, binary data, or the
    byte offset and line of the first byte that is not UTF-8.
    """
    refuse_special_file(path, what)
    try:
        fh = open(path, "rb")
    except IsADirectoryError:
        raise FileProblem(f"{path}: is a directory, expected a {what}") from None
    except OSError as exc:
        raise FileProblem(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    with fh:
        if b"\x00" in fh.read(8192):
            raise FileProblem(f"{path}: looks like a binary file, expected a UTF-8 text {what}")
        fh.seek(0)
        offset = 0
        for number, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FileProblem(
                    f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {offset + exc.start}, line {number}); "
                    f"save the {what} as UTF-8"
                ) from None
            offset += len(raw)
            yield number, text


#: Integers longer than this are not ids or counts but a broken file (Python refuses to convert > 4300 digits).
MAX_INT_DIGITS = 64
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (write null or a finite number)")


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer with {len(digits.lstrip('-'))} digits (write long ids as strings)")
    return int(digits)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is out of range (not a finite number)")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            shown = key if len(key) <= 40 else key[:37] + "..."
            raise ValueError(f"key {shown!r} appears twice in one object (readers differ on which copy counts; "
                             "keep one)")
        out[key] = value
    return out


def loads_json(text: str, where: str, *, unicode_check: bool = True, unique_keys: bool = False) -> Any:
    """Strict JSON: NaN/Infinity, huge integers, runaway nesting, (with ``unique_keys``) a key given twice in one
    object and (with ``unicode_check``) lone surrogate escapes are one-line errors naming ``where`` (``file:line``)
    instead of values that break a later step."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float,
                           object_pairs_hook=_unique_keys if unique_keys else None)
    except json.JSONDecodeError as exc:
        raise FileProblem(f"{where}: invalid JSON ({exc.msg}, column {exc.colno})") from None
    except ValueError as exc:
        raise FileProblem(f"{where}: {exc}") from None
    except RecursionError:
        raise FileProblem(f"{where}: JSON nested too deeply to read (flatten the structure)") from None
    if unicode_check and _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise FileProblem(f"{where}: holds a lone surrogate escape (\\ud800-\\udfff without its pair): not valid "
                              "Unicode text; fix the text that wrote it") from None
        except RecursionError:
            raise FileProblem(f"{where}: JSON nested too deeply to read (flatten the structure)") from None
    return value
