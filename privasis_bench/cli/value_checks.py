"""Checks of option values that click's types cannot express: finite numbers, safe free-text labels and input
paths that exist (checked before any model or estimator loads)."""

from __future__ import annotations

import math
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Optional

from privasis_bench.errors import PrivasisError

#: Shapes of API keys and tokens: a label looking like one would publish it in results.json.
_KEY_SHAPES = (
    re.compile(r"(?i)\b(sk|pk|rk|hf|ghp|gho|github_pat|xox[abp]|glpat|AKIA)[-_][A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+\S{8,}"),
    re.compile(r"(?i)(api[_-]?key|token|secret|password)\s*[=:]"),
    re.compile(r"(?=[A-Za-z_]*[0-9])(?=[0-9_]*[A-Za-z])[A-Za-z0-9_]{32,}"),  # a long unbroken run of letters and digits
)


def check_finite(option: str, value: Optional[float]) -> None:
    """``inf`` and ``nan`` pass click's range checks; no setting means them."""
    if value is not None and not math.isfinite(value):
        raise PrivasisError(f"{option} must be a finite number, not {value}")


def check_label(option: str, value: Optional[str]) -> None:
    """A free-text model label written into results: no absolute path, no key-like text, one short line."""
    if value is None:
        return
    text = value.strip()
    if not text or len(text) > 200 or any(ch in text for ch in "\n\r\t\x00"):
        raise PrivasisError(f"{option} must be a short one-line name (1-200 characters), e.g. 'my-model-7b'")
    if PurePosixPath(text).is_absolute() or PureWindowsPath(text).is_absolute() or text.startswith("~"):
        raise PrivasisError(f"{option} {text!r} is a file path; give a plain name instead (results and "
                            "submissions publish it)")
    if any(shape.search(text) for shape in _KEY_SHAPES):
        raise PrivasisError(f"{option} looks like an API key or token; give a plain name instead (results and "
                            "submissions publish it)")


def check_input_path(option: str, path: Optional[Path]) -> None:
    """An input file named on the command line exists and is not a FIFO or device, said before anything slow loads."""
    from privasis_bench.fsutil import refuse_special_file

    if path is None:
        return
    if not path.exists():
        raise PrivasisError(f"{option} {path}: no such file")
    refuse_special_file(path, f"{option} file")


def check_choice(name: str, value: Optional[str], allowed: tuple[str, ...]) -> None:
    """One line when an option's value is not one of ``allowed`` (None: not given)."""
    if value is not None and value not in allowed:
        raise PrivasisError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
