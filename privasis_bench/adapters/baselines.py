"""Calibration baselines: deterministic "models" that need no network and no weights.

They anchor a leaderboard: ``identity`` (returns the original text: leaks everything, retains
everything), ``empty`` (returns nothing: leaks nothing, retains nothing), ``reference`` (the dataset's
reference sanitized text; not rankable: it is the authors' pipeline output), ``mask-targets`` (masks
every gold target value; not rankable: it reads labels) and ``regex-scrubber`` (a rule-based PII
scrubber that ignores the instruction; rankable). The model part of the spec is ignored:
``identity``, ``identity:`` and ``identity:baseline`` are the same.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.http_errors import bool_arg
from privasis_bench.errors import ModelSpecError

if TYPE_CHECKING:
    from privasis_bench.data.records import Record

DEFAULT_PLACEHOLDER = "[REDACTED]"


class _Baseline(Adapter):
    """Shared plumbing: no network, no caching, one output computed from the request's record."""

    cacheable = False
    deterministic = True
    accepted_args: tuple[str, ...] = ()

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        unknown = sorted(k for k in args if k not in self.accepted_args)
        if unknown:
            accepted = ", ".join(self.accepted_args) or "none"
            raise ModelSpecError(f"{self.provider}: unknown model argument(s) {', '.join(unknown)}; accepted: {accepted}")

    def _record(self, request: ChatRequest) -> "Record":
        if request.record is None:
            raise AdapterError(f"{self.provider} baseline needs the request's record, which is missing", retryable=False)
        return request.record

    def output(self, request: ChatRequest) -> str:
        raise NotImplementedError

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Return the baseline's output for the request's record."""
        return ChatResult(text=self.output(request), finish_reason="stop", usage=Usage())


class IdentityBaseline(_Baseline):
    """Returns the original record unchanged."""

    provider = "identity"
    degenerate = "changes nothing: it keeps every detail by construction, so it is the no-privacy end point"

    def output(self, request: ChatRequest) -> str:
        return self._record(request).text


class EmptyBaseline(_Baseline):
    """Returns an empty string (a real, empty output, not a failure)."""

    provider = "empty"
    degenerate = "deletes everything: it leaks nothing by construction, so it is the no-utility end point"

    def output(self, request: ChatRequest) -> str:
        self._record(request)
        return ""


class ReferenceBaseline(_Baseline):
    """Returns the dataset's reference sanitized text (the authors' pipeline output)."""

    provider = "reference"
    rankable = False

    def output(self, request: ChatRequest) -> str:
        return self._record(request).reference_sanitized


def value_strings(value: Any) -> list[str]:
    """The strings a target value can appear as: list items, dict values, numbers as str (no nulls)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [s for v in value.values() for s in value_strings(v)]
    if isinstance(value, (list, tuple, set)):
        return [s for v in value for s in value_strings(v)]
    text = str(value).strip()
    return [text] if text else []


def mask_values(text: str, values: list[str], placeholder: str = DEFAULT_PLACEHOLDER) -> str:
    """Replace every occurrence of each value (case-insensitive, longest first) with ``placeholder``."""
    unique = sorted({v for v in values if v}, key=lambda v: (-len(v), v))
    if not unique:
        return text
    pattern = re.compile("|".join(re.escape(v) for v in unique), re.IGNORECASE)
    return pattern.sub(lambda _m: placeholder, text)


class MaskTargetsBaseline(_Baseline):
    """Masks every gold target value (drop and abstract) in the original text. Reads labels: not rankable."""

    provider = "mask-targets"
    rankable = False
    accepted_args = ("placeholder",)

    def output(self, request: ChatRequest) -> str:
        record = self._record(request)
        values = [s for attr in record.targets for s in value_strings(attr.value)]
        return mask_values(record.text, values, str(self.args.get("placeholder", DEFAULT_PLACEHOLDER)))


# Rule-based scrubbing, applied in order (URLs and emails before the digit rules eat their parts).
_MONTHS = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
           r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
#: (label, pattern, minimum number of digits in a match for it to count)
SCRUB_RULES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("URL", re.compile(r"\b(?:https?://|www\.)[^\s<>\"')\]]*[^\s<>\"')\].,;:!?]", re.IGNORECASE), 0),
    ("EMAIL", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b"), 0),
    ("MONEY", re.compile(
        r"(?:[$€£¥₹]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|thousand|[kKmMbB]\b))?)"
        r"|(?:\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|JPY|INR|CAD|AUD|CHF|dollars|euros|pounds)\b)"), 1),
    ("DATE", re.compile(
        rf"\b(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}[/.\-]\d{{1,2}}[/.\-]\d{{2,4}}"
        rf"|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\.?,?\s+\d{{4}}"
        rf"|{_MONTHS}\.?\s+\d{{4}})\b", re.IGNORECASE), 1),
    ("ID", re.compile(r"\b(?:[A-Z]{1,4}-?\d{4,}[A-Z0-9\-]*|\d{8,}|\d{4}(?:[ \-]\d{4}){2,3})\b"), 4),
    ("PHONE", re.compile(r"(?<![\w+])(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{2,4}\)[\s.\-]?)?\d{2,4}(?:[\s.\-]\d{2,4}){1,4}(?!\w)"), 7),
)
_TITLED_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Mx|Dr|Prof)\.?\s+[A-Z][a-z]+(?:[\s\-]+[A-Z][a-z]+)?")
_CAPITALIZED_RUN = re.compile(r"\b[A-Z][a-z]+(?:-[A-Z][a-z]+)?(?:\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?)+\b")
#: Capitalized words that are usually not parts of names (sentence starts, salutations, document words).
_NOT_NAME_WORDS = frozenset(
    "The This That These Those Dear Hello Hi Thanks Thank Best Kind Regards Please Note Subject Date Dept Department "
    "Street Avenue Road Hospital Clinic Bank University Company Inc Ltd Center Centre Office Services Service Team "
    "January February March April May June July August September October November December Monday Tuesday Wednesday "
    "Thursday Friday Saturday Sunday Patient Client Customer Account Invoice Report Summary Total Notes Our Your We "
    "If When For And But Or In On At To From Of By With As Re Dr Mr Mrs Ms".split()
)


def _digits(text: str) -> int:
    return sum(ch.isdigit() for ch in text)


def _redact_capitalized_run(match: re.Match[str], tag: str) -> str:
    """Within a run of capitalized words, replace each stretch of 2+ name-like words with the tag."""
    words = match.group(0).split()
    out: list[str] = []
    stretch: list[str] = []
    for word in words + [""]:
        if word and word not in _NOT_NAME_WORDS:
            stretch.append(word)
            continue
        out.extend([tag] if len(stretch) >= 2 else stretch)
        stretch = []
        if word:
            out.append(word)
    return " ".join(out)


def regex_scrub(text: str, *, names: bool = False, tag: str = "[{label}]") -> str:
    """Redact URLs, emails, money, dates, long ids and phone numbers (and optionally name-like word runs)."""
    for label, pattern, min_digits in SCRUB_RULES:
        replacement = tag.format(label=label)
        text = pattern.sub(lambda m, r=replacement, n=min_digits: r if _digits(m.group(0)) >= n else m.group(0), text)
    if names:
        name_tag = tag.format(label="NAME")
        text = _TITLED_NAME.sub(name_tag, text)
        text = _CAPITALIZED_RUN.sub(lambda m: _redact_capitalized_run(m, name_tag), text)
    return text


class _Tracked:
    """Text under successive substitutions, remembering which original characters each replacement covers.

    ``origin`` holds, per current character, its index in the original text, ``-(k + 1)`` for a character of the
    placeholder of replacement ``k``, or None for a character the scrubber inserted (a joining space).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.origin: list[int | None] = list(range(len(text)))
        self.spans: list[tuple[int, int] | None] = []

    def _claim(self, start: int, end: int) -> int | None:
        """Record the original characters under current [start, end) as one new span; its index, or None."""
        lo, hi = None, None
        for o in self.origin[start:end]:
            if o is None:
                continue
            if o < 0:
                absorbed = self.spans[-o - 1]
                self.spans[-o - 1] = None
                if absorbed is None:
                    continue
                a, b = absorbed
            else:
                a, b = o, o + 1
            lo, hi = (a, b) if lo is None else (min(lo, a), max(hi, b))
        if lo is None:
            return None
        self.spans.append((lo, hi))
        return len(self.spans) - 1


def regex_scrub_spans(text: str, *, names: bool = False, tag: str = "[{label}]") -> tuple[str, list[tuple[int, int]]]:
    """:func:`regex_scrub`'s output together with the character spans of ``text`` it replaced (sorted)."""
    t = _Tracked(text)

    def whole(replacement: str, min_digits: int) -> Any:
        def pieces(m: re.Match[str]) -> list:
            if _digits(m.group(0)) < min_digits:
                return [(m.group(0), "keep")]
            return [(replacement, (m.start(), m.end()))]
        return pieces

    for label, pattern, min_digits in SCRUB_RULES:
        _substitute_keeping(t, pattern, whole(tag.format(label=label), min_digits))
    if names:
        name_tag = tag.format(label="NAME")
        _substitute_keeping(t, _TITLED_NAME, whole(name_tag, 0))

        def run(m: re.Match[str]) -> list:
            words = [(w.start() + m.start(), w.end() + m.start(), w.group(0)) for w in re.finditer(r"\S+", m.group(0))]
            pieces: list = []
            stretch: list[tuple[int, int, str]] = []
            for word in words + [None]:  # type: ignore[list-item]
                if word is not None and word[2] not in _NOT_NAME_WORDS:
                    stretch.append(word)
                    continue
                if len(stretch) >= 2:
                    parts: list = [(name_tag, (stretch[0][0], stretch[-1][1]))]
                else:
                    parts = [("keep-word", (s, e)) for s, e, _ in stretch]
                if word is not None:
                    parts.append(("keep-word", (word[0], word[1])))
                for part in parts:
                    if pieces:
                        pieces.append((" ", None))
                    pieces.append(part)
                stretch = []
            return pieces

        _substitute_keeping(t, _CAPITALIZED_RUN, run)
    return t.text, sorted(s for s in t.spans if s is not None)


def _substitute_keeping(t: _Tracked, pattern: re.Pattern[str], pieces: Any) -> None:
    """:meth:`_Tracked.substitute` where a piece may also keep matched text ("keep": the whole match,
    ("keep-word", (start, end)): a part of it), with the original origins of the kept characters."""
    out: list[str] = []
    origin: list[int | None] = []
    pos = 0
    for m in pattern.finditer(t.text):
        out.append(t.text[pos:m.start()])
        origin.extend(t.origin[pos:m.start()])
        for piece in pieces(m):
            what, where = piece if isinstance(piece, tuple) else (piece, None)
            if where == "keep":
                out.append(m.group(0))
                origin.extend(t.origin[m.start():m.end()])
            elif what == "keep-word":
                out.append(t.text[where[0]:where[1]])
                origin.extend(t.origin[where[0]:where[1]])
            elif where is None:
                out.append(what)
                origin.extend([None] * len(what))
            else:
                k = t._claim(*where)
                out.append(what)
                origin.extend([None if k is None else -(k + 1)] * len(what))
        pos = m.end()
    out.append(t.text[pos:])
    origin.extend(t.origin[pos:])
    t.text, t.origin = "".join(out), origin


class RegexScrubberBaseline(_Baseline):
    """Rule-based PII redaction that ignores the instruction (a rankable non-LLM anchor).

    Arguments: ``names=true`` also redacts capitalized word pairs that look like person names.
    """

    provider = "regex-scrubber"
    reports_spans = True
    accepted_args = ("names",)
    description = ("This project's regex scrubber: instruction-blind and rule-based; regular expressions remove contact "
                   "details, dates, amounts and ids, and with names=true capitalised name pairs.")

    def __init__(self, model: str = "", **args: Any) -> None:
        super().__init__(model, **args)
        self.names = bool(bool_arg(args, "names", "regex-scrubber"))  # "maybe" is one line, not read as true

    def output(self, request: ChatRequest) -> str:
        return regex_scrub(self._record(request).text, names=self.names)

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """The scrubbed text, with the character spans of the record text it replaced."""
        text, spans = regex_scrub_spans(self._record(request).text, names=self.names)
        return ChatResult(text=text, finish_reason="stop", usage=Usage(), spans=spans)
