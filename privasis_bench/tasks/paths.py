"""Portable names for the files a task uses, so results can be shared without local paths.

A file shipped with the package is named ``privasis_bench:tasks/<path inside tasks/>`` wherever the package is
installed (a file a registered family ships: ``<package>:<folder>/<path>``); any other file is named by its base
name plus the sha256 of its contents. Nothing written by a run carries a home directory, a virtualenv or a temporary
directory.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

BUILTIN_PREFIX = "privasis_bench:tasks/"


def builtin_tasks_dir() -> Path:
    """The shipped ``tasks/`` directory: inside the wheel, or the source checkout's top level."""
    package_root = Path(__file__).resolve().parents[1]
    packaged = package_root / "_tasks"
    if packaged.is_dir():
        return packaged
    return package_root.parent / "tasks"


def shipped_dirs() -> list[tuple[str, Path]]:
    """``(prefix, folder)`` of every folder of shipped tasks: the harness's own (``privasis_bench:tasks/``), then the
    folder each registered family ships (``FamilySpec.tasks_dir`` ``"package:folder"``, prefix ``package:folder/``);
    installed code either way, never a file a run or a submission brings."""
    from importlib import resources

    from privasis_bench.tasks.family import FAMILIES

    found = [(BUILTIN_PREFIX, builtin_tasks_dir())]
    for name in FAMILIES.names():
        try:
            target = FAMILIES.get(name).tasks_dir
            if target:
                package, _, folder = target.partition(":")
                found.append((f"{package}:{folder.strip('/')}/", Path(str(resources.files(package).joinpath(folder)))))
        except (ImportError, TypeError):  # a plugin that cannot load ships nothing
            continue
    return found


def shipped_ref(path: str | Path) -> str | None:
    """The portable name of a file inside a folder of shipped tasks (:func:`shipped_dirs`), else None."""
    resolved, builtin = Path(path).resolve(), builtin_tasks_dir().resolve()
    folders = [(BUILTIN_PREFIX, builtin)] if resolved.is_relative_to(builtin) else shipped_dirs()[1:]
    for prefix, folder in folders:
        if resolved.is_relative_to(folder.resolve()):
            return prefix + resolved.relative_to(folder.resolve()).as_posix()
    return None


def shipped_path(ref: str) -> Path | None:
    """The file a shipped file's portable name names (the inverse of :func:`shipped_ref`); None for any other name.
    A name that climbs out of its shipped folder (``..``) raises ValueError: it names no shipped file."""
    for prefix, folder in shipped_dirs():
        if ref.startswith(prefix):
            path = (folder / ref.removeprefix(prefix)).resolve()
            if not path.is_relative_to(folder.resolve()):
                raise ValueError(f"{ref}: not a file inside the shipped folder {prefix}")
            return path
    return None


def is_shipped_ref(ref: object) -> bool:
    """Whether a recorded file reference names a shipped file (see :func:`shipped_ref`)."""
    return isinstance(ref, str) and any(ref.startswith(prefix) for prefix, _ in shipped_dirs())


def file_sha256(path: str | Path) -> str | None:
    """sha256 of a file's bytes (None when it cannot be read)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def portable_name(path: str | Path | None) -> str | None:
    """``privasis_bench:tasks/...`` for a shipped file, the base name for any other file."""
    if path is None:
        return None
    return shipped_ref(path) or Path(path).name


def file_ref(path: str | Path | None) -> Any:
    """How results name a file: the portable name of a shipped file, ``{name, sha256}`` for a user's file."""
    if path is None:
        return None
    return shipped_ref(path) or {"name": Path(path).name, "sha256": file_sha256(path)}


def locate(value: str, base_dir: Path, shipped: tuple[Path, ...] = ()) -> Path:
    """A relative path a YAML names: beside that YAML first, else the shipped file of that name.

    So a user's task or recipe can say ``include: _privasis_base.yaml`` or ``template: prompts/sanitize.txt`` and
    get the file shipped with the package; a file of the same name beside the user's YAML always wins.
    """
    own = (base_dir / value).resolve()
    if own.exists() or Path(value).is_absolute():
        return own
    for directory in shipped or (builtin_tasks_dir(),):
        candidate = (directory / value).resolve()
        if candidate.exists():
            return candidate
    return own
