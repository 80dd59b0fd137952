"""Turning HTTP-SDK exceptions into :class:`AdapterError` (shared by the openai and anthropic adapters).

The engine owns retries; adapters only classify. Transient conditions (429, 408, 409, 5xx, timeouts,
connection failures) are retryable; client errors (400, 401, 403, 404, 422, ...) are not. A server's
``retry-after-ms`` / ``Retry-After`` hint is passed on in seconds. Messages are scrubbed of secrets.
"""

from __future__ import annotations

import email.utils
import errno
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from privasis_bench.adapters.base import AdapterError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
MAX_MESSAGE_CHARS = 600
#: Seconds one request may take before it counts as stalled, at least (``timeout=`` sets it for every request).
DEFAULT_TIMEOUT_S = 180.0
#: Without ``timeout=``, a request's timeout follows its token budget: this many seconds, plus ...
TIMEOUT_BASE_S = 60.0
#: ... this many per token of the budget (a server writing 10 tokens/s fills any budget in time), never below
#: :data:`DEFAULT_TIMEOUT_S`: 180 s up to a 1,200-token budget, 470 s for a 4,096-token judge comparison.
TIMEOUT_PER_TOKEN_S = 0.1
_KEY_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-\.=]{6,}"),
)


def is_retryable_status(status: int) -> bool:
    """True for statuses where trying again can help (rate limits, timeouts, conflicts, server errors)."""
    return status in RETRYABLE_STATUS or status >= 500


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), else None."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def scrub(message: str, secrets: Iterable[str | None] = ()) -> str:
    """Remove secrets (and anything shaped like an API key or bearer token) from a message."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            message = message.replace(secret, "***")
    message = _KEY_PATTERNS[0].sub("sk-***", message)
    message = _KEY_PATTERNS[1].sub(r"\1***", message)
    return message


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."


def classify_sdk_error(exc: BaseException, sdk: Any, *, provider: str, secrets: Iterable[str | None] = ()) -> AdapterError:
    """Map an exception raised by the ``openai`` or ``anthropic`` SDK (module ``sdk``) to AdapterError."""
    secrets = tuple(secrets)
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        headers = getattr(getattr(exc, "response", None), "headers", None)
        message = scrub(_short(f"{provider} HTTP {status}: {getattr(exc, 'message', exc)}"), secrets)
        return AdapterError(
            message, retryable=is_retryable_status(status), status=status, retry_after=parse_retry_after(headers)
        )
    if isinstance(exc, sdk.APITimeoutError):
        return AdapterError(scrub(_short(f"{provider} request timed out: {exc}"), secrets), retryable=True, timeout=True)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        if connection_refused(exc):
            url = getattr(getattr(exc, "request", None), "url", None)
            where = f" at {url}" if url is not None else ""
            return AdapterError(scrub(_short(f"{provider}: connection refused{where} (nothing listens there)"), secrets),
                                retryable=True, refused=True)
        if name_not_resolved(exc):
            url = getattr(getattr(exc, "request", None), "url", None)
            host = getattr(url, "host", None) or "the server's host"
            return AdapterError(scrub(_short(f"{provider}: cannot resolve host {host} (DNS lookup failed: a typo in "
                                             "base_url, or no network)"), secrets), retryable=True, refused=True)
        detail = f"{exc}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
        return AdapterError(scrub(_short(f"{provider} connection error: {detail}"), secrets), retryable=True)
    if isinstance(exc, getattr(sdk, "APIResponseValidationError", ())):
        return AdapterError(scrub(_short(f"{provider} returned a malformed response: {exc}"), secrets), retryable=True)
    return AdapterError(scrub(_short(f"{provider} error: {type(exc).__name__}: {exc}"), secrets), retryable=False)


def connection_refused(exc: BaseException) -> bool:
    """True when ``exc`` or an exception behind it says the connection was refused (nothing listens there)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError) or "connection refused" in str(cur).lower() \
                or getattr(cur, "errno", None) == errno.ECONNREFUSED:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


#: What resolvers say when a host name has no address (glibc, macOS, Windows, httpx/anyio wrappers).
_NO_NAME = ("name or service not known", "nodename nor servname", "temporary failure in name resolution",
            "getaddrinfo failed", "no address associated with hostname", "name resolution")


def name_not_resolved(exc: BaseException) -> bool:
    """True when ``exc`` or an exception behind it says the host name could not be resolved (DNS)."""
    import socket

    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, socket.gaierror) or any(words in str(cur).lower() for words in _NO_NAME):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def request_timeout(given: float | None, max_tokens: int | None) -> float:
    """Seconds one request may take: ``given`` (the ``timeout=`` model argument) when set, else by its budget."""
    if given is not None:
        return given
    return max(DEFAULT_TIMEOUT_S, TIMEOUT_BASE_S + TIMEOUT_PER_TOKEN_S * float(max_tokens or 0))


#: The longest wait a model argument may ask for (one day): anything longer is a typo, and inf would hang.
MAX_SECONDS = 86400.0


def seconds_arg(args: Mapping[str, Any], name: str, default: float, provider: str) -> float:
    """A positive number of seconds from the model arguments; anything else is a one-line ModelSpecError."""
    from privasis_bench.errors import ModelSpecError

    raw = args.get(name)
    if raw is None or raw == "":
        return float(default)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ModelSpecError(f"{provider}: model argument {name}={raw!r} must be a number of seconds") from None
    if not 0 < value <= MAX_SECONDS:
        raise ModelSpecError(f"{provider}: model argument {name}={raw!r} must be between 0 and {MAX_SECONDS:g} seconds")
    return value


def url_arg(args: Mapping[str, Any], name: str, provider: str) -> str | None:
    """An ``http(s)://host[:port]/...`` URL from the model arguments (None when unset); anything else is one line.

    Checked when the adapter is built, so a typo such as ``base_url=notaurl`` stops the run before the first
    record instead of failing every record.
    """
    from urllib.parse import urlsplit

    from privasis_bench.errors import ModelSpecError

    raw = args.get(name)
    if raw is None or raw == "":
        return None
    text = str(raw).strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelSpecError(f"{provider}: model argument {name}={raw!r} is not an http(s) URL "
                             f"(give e.g. {name}=http://127.0.0.1:8080/v1)")
    return text


def bool_arg(args: Mapping[str, Any], name: str, provider: str) -> bool | None:
    """A true/false model argument (None when unset); ``maybe`` or ``2`` is a one-line ModelSpecError."""
    from privasis_bench.errors import ModelSpecError

    raw = args.get(name)
    if raw is None or raw == "":
        return None
    if isinstance(raw, bool):
        return raw
    lowered = str(raw).strip().lower()
    if lowered in ("1", "yes", "on"):
        return True
    if lowered in ("0", "no", "off"):
        return False
    raise ModelSpecError(f"{provider}: model argument {name}={raw!r} must be true or false")
