"""User-facing errors: the CLI prints them as one line (no traceback) and exits non-zero."""

from __future__ import annotations


class PrivasisError(Exception):
    """Base class of every error a user can fix (bad config, missing file, unreachable hub...)."""

    exit_code: int = 2


class TaskConfigError(PrivasisError):
    """A task YAML is malformed: names the file and the key."""

    def __init__(self, file: str, key: str | None, message: str):
        self.file, self.key = file, key
        where = f"{file}: {key}" if key else file
        super().__init__(f"{where}: {message}")


class DataError(PrivasisError):
    """A dataset row or file cannot be read: names the record id and the field."""


class ModelSpecError(PrivasisError):
    """A model spec cannot be parsed or its provider is unknown."""
