"""A server nothing listens at: stopped at once with its address, unless the user asked to wait for it.

A connection refused before the server ever answered is almost always a wrong ``base_url`` or a server not
started: backing off for a minute per request only hides it. So the first refused call stops the run with one line
naming the address (:class:`ServerUnreachableError`), unless ``--wait-for-server SECONDS`` asks to wait for a
server that is still starting: then the call is tried again every :data:`STEP_S` seconds for that long, with one
line saying so. Once the server has answered, a refused connection is an ordinary transient failure (a server
restarting) and goes through the retry policy.
"""

from __future__ import annotations

import time
from typing import Callable

from privasis_bench.engine.retry import FatalModelError

#: Seconds between two tries while waiting for a server that is still starting.
STEP_S = 1.0


class ServerUnreachableError(FatalModelError):
    """Nothing listens at the model's (or judge's) address, and the user did not ask to wait for it."""

    exit_code = 1

    def __init__(self, who: str, message: str, waited: float):
        self.spec, self.status = who, None
        after = f" after waiting {waited:g} s" if waited else ""
        hint = ("start the server (or fix base_url), or pass --wait-for-server SECONDS to wait for one that is still "
                "starting" if not waited else "start the server (or fix base_url), or wait longer with --wait-for-server")
        super(FatalModelError, self).__init__(f"{who}: {message.rstrip('. ')}{after}; run stopped: {hint}")


class ServerReach:
    """Whether an engine's server has answered yet, and how long a refused connection may be waited out."""

    def __init__(self, who: str, wait_s: float) -> None:
        self.who, self.wait_s = who, wait_s
        self.answered = False
        self._since: float | None = None

    def refused(self, message: str, note: Callable[[str], None]) -> bool:
        """After a refused connection: True to try again in :data:`STEP_S` s (waiting for the server), False to
        treat it as an ordinary transient failure (the server answered before); raises when it is time to stop."""
        if self.answered:
            return False
        now = time.monotonic()
        if self._since is None:
            self._since = now
            if self.wait_s > 0:
                note(f"{self.who}: {message}; waiting up to {self.wait_s:g} s for the server (--wait-for-server)")
        if now - self._since < self.wait_s:
            return True
        raise ServerUnreachableError(self.who, message, self.wait_s)
