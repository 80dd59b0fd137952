"""Retry policy and the fatal-error class: how patiently a failing call is retried, and when a run stops."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from privasis_bench.errors import PrivasisError

FATAL_STATUS = frozenset({401, 403})
#: A wait before a retry at least this long (seconds) is announced with one console line.
LONG_WAIT_S = 5.0



class FatalModelError(PrivasisError):
    """A model call was rejected in a way retrying cannot fix (bad key, no permission): the run stops."""

    def __init__(self, spec: str, status: int | None, message: str):
        self.spec, self.status = spec, status
        super().__init__(
            f"model {spec} rejected the request (HTTP {status}), run stopped: {message.rstrip('. ')}. "
            "Check the API key and its permissions; finished results are saved and a re-run resumes."
        )



@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failing call is retried.

    ``max_attempts`` counts the first try; ``max_timeouts`` bounds how many of those tries may end without a
    reply in time (a stalled request then fails after about ``max_timeouts`` × the request timeout, instead of
    freezing a run for ``max_attempts`` timeouts). The wait before retry *n* is
    ``min(max_delay, base_delay * 2**(n-1))`` scaled by a random factor in ``1 ± jitter``; a
    server's Retry-After hint replaces it (capped at ``max_retry_after``). ``wait_for_server``: see
    :mod:`privasis_bench.engine.reach` (0: a server refusing connections from the start stops the run at once).
    """

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.25
    max_retry_after: float = 120.0
    max_timeouts: int = 2
    wait_for_server: float = 0.0  # seconds a server refusing connections before it ever answered is waited for

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.max_timeouts < 1:
            raise ValueError("max_attempts and max_timeouts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0 or self.wait_for_server < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("delays must be non-negative and jitter within [0, 1]")

    def delay(self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(max(0.0, float(retry_after)), self.max_retry_after)
        base = min(self.max_delay, self.base_delay * (2 ** max(0, attempt - 1)))
        factor = 1.0 + (rng or random).uniform(-self.jitter, self.jitter)
        return max(0.0, base * factor)

    def wait_line(self, who: str, message: str, attempt: int, retry_after: float | None, delay: float) -> str:
        """The console line announcing a long wait before a retry: why, how long, and until when."""
        until = time.strftime("%H:%M:%S", time.localtime(time.time() + delay))
        return f"{who}: {message}; waiting {delay:.1f}s until {until} ({self.reason(attempt, retry_after)})"

    def capped(self, retry_after: float | None) -> bool:
        """Whether a server's Retry-After hint asks for longer than this policy waits."""
        return retry_after is not None and float(retry_after) > self.max_retry_after

    def reason(self, attempt: int, retry_after: float | None) -> str:
        """Why the wait after failed attempt ``attempt`` is as long as it is (for the console)."""
        if retry_after is None:
            return f"back-off before attempt {attempt + 1} of at most {self.max_attempts}"
        asked = max(0.0, float(retry_after))
        if self.capped(retry_after):
            return (f"the server asked to wait {asked:g}s (Retry-After), capped at {self.max_retry_after:g}s by "
                    "--retry-max-delay")
        return f"the server asked to wait {asked:g}s (Retry-After)"


def fault_kind(status: int | None, timeout: bool, rejected: bool = False) -> str:
    """The kind of a failed attempt, as the end-of-run fault summary counts it."""
    if rejected:
        return "empty or cut answer"
    if timeout:
        return "timeout"
    if status is not None:
        return f"HTTP {status}"
    return "connection or other error"
