"""Reading inspect_ai eval logs (``.eval`` archives and ``.json`` logs) as predictions to judge.

``privasis-bench evaluate --predictions LOG.eval`` hands each sample's raw completion to the same post-processing
and judging as our own sanitize outputs. inspect_ai is imported only when a log is read
(``pip install 'privasis-bench[inspect]'``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from privasis_bench.errors import DataError


def looks_like_inspect_log(path: Path) -> bool:
    """An ``.eval`` archive, or a ``.json`` file holding one object with inspect's ``eval`` and ``version`` keys."""
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536).decode("utf-8", errors="ignore")
    except OSError:
        return False
    return head.lstrip().startswith("{") and '"eval"' in head and '"version"' in head


@dataclass
class InspectSample:
    """One sample of a log: its id, the raw completion (None when the sample failed), why it failed, the messages."""

    id: str
    raw: str | None
    error: str | None
    messages: list[dict[str, str]]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(getattr(part, "text", "") or "" for part in content or [])


def read_inspect_log(path: Path) -> tuple[str, Iterator[tuple[int, InspectSample]]]:
    """(``inspect:<model>``, (position, sample) for every sample of the log); errors name the file."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DataError(f"{path}: reading inspect_ai logs needs inspect-ai: pip install 'privasis-bench[inspect]'") from None
    try:
        log = read_eval_log(str(path))
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable inspect_ai log ({type(exc).__name__}: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - zip/pydantic errors from a damaged archive
        raise DataError(f"{path}: not a readable inspect_ai log ({type(exc).__name__}: {exc})") from None
    if not log.samples:
        raise DataError(f"{path}: the inspect_ai log holds no samples (status {log.status}; was it written with samples?)")
    model = f"inspect:{log.eval.model}"

    def samples() -> Iterator[tuple[int, InspectSample]]:
        for n, sample in enumerate(log.samples or [], start=1):
            error = sample.error.message if sample.error is not None else None
            output = sample.output
            if error is None and output is not None and getattr(output, "error", None):
                error = str(output.error)
            raw = None if error is not None or output is None or not output.choices else output.completion
            if raw is None and error is None:
                error = "inspect recorded no completion for this sample"
            messages = [{"role": str(m.role), "content": _text(m.content)} for m in sample.messages or []
                        if m.role in ("system", "user")]
            yield n, InspectSample(id=str(sample.id), raw=raw, error=error, messages=messages)

    return model, samples()
