"""Find what must never be published: strings that look like API keys or tokens, and absolute local paths."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Token shapes of common providers, bearer headers and key=value assignments of secrets.
_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an OpenAI-style key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    ("a GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}")),
    ("an AWS access key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{12,}")),
    ("a secret assignment", re.compile(r"""["']?\b(?:api[_-]?key|token|secret|password)["']?\s*[:=]\s*["']?(?!null\b|none\b)[A-Za-z0-9._~+/=-]{8,}""", re.I)),
)
#: Absolute paths into a user's machine (POSIX home/work/temp roots, file URLs, and Windows drives as JSON
#: escapes them: ``C:\\\\Users``).
_PATH_PATTERN = re.compile(
    r"(?:file://|(?<![\w.:/-])/(?:home|Users|root|tmp|work|var|opt|mnt|srv|private|scratch|data|net)/[^\s\"']+"
    r"|(?<![\w'])[A-Za-z]:\\\\[A-Za-z][^\s\"']*)"
)


@dataclass(frozen=True)
class Finding:
    """One suspicious string: what it looks like and where (line number in its file)."""

    kind: str
    line: int
    excerpt: str

    def describe(self, name: str) -> str:
        return f"{name}:{self.line}: {self.kind} ({self.excerpt})"


def _redact(text: str) -> str:
    return text[:6] + "…" if len(text) > 6 else text


def scan_text(text: str) -> list[Finding]:
    """Every secret-looking string (redacted in the finding) and absolute path in ``text``."""
    found: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in _SECRET_PATTERNS:
            for match in pattern.finditer(line):
                found.append(Finding(f"looks like {kind}", number, _redact(match.group(0))))
        for match in _PATH_PATTERN.finditer(line):
            found.append(Finding("an absolute local path", number, match.group(0)[:60]))
    return found
