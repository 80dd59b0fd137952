"""Read scalar metadata from a GGUF file's header without loading the model or any llama.cpp binding.

Only the key/value section is read (the tensor data is never touched), so this is cheap even for a
large file. Used for the model's training context length (``<architecture>.context_length``).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def _read(fh: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = fh.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _string(fh: BinaryIO) -> str:
    length = _read(fh, "<Q")
    return fh.read(length).decode("utf-8", errors="replace")


def _value(fh: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        return _read(fh, _SCALARS[kind])
    if kind == _STRING:
        return _string(fh)
    if kind == _ARRAY:
        item_kind, count = _read(fh, "<I"), _read(fh, "<Q")
        if item_kind in _SCALARS:  # skipped, not decoded: vocabularies hold hundreds of thousands of entries
            fh.seek(struct.calcsize(_SCALARS[item_kind]) * count, 1)
        elif item_kind == _STRING:  # skipped by their lengths (token lists, merges)
            for _ in range(count):
                fh.seek(_read(fh, "<Q"), 1)
        else:
            for _ in range(count):
                _value(fh, item_kind)
        return None
    raise ValueError(f"unknown GGUF value type {kind}")


def gguf_metadata(path: str | Path) -> dict[str, Any]:
    """The header's scalar and string key/values (arrays map to None); ValueError if not a GGUF file."""
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = _read(fh, "<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version} is not supported")
        _read(fh, "<Q")  # tensor count
        count = _read(fh, "<Q")
        meta: dict[str, Any] = {}
        for _ in range(count):
            key = _string(fh)
            meta[key] = _value(fh, _read(fh, "<I"))
        return meta


def training_context(path: str | Path) -> int | None:
    """The model's training context length from its GGUF metadata, or None if unreadable."""
    try:
        meta = gguf_metadata(path)
        return int(meta[f"{meta['general.architecture']}.context_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
