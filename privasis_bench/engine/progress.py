"""Progress display for engine stages: a bar on a terminal, a plain line at a steady interval elsewhere."""

from __future__ import annotations

import os
import sys
import threading
import time

#: Seconds between plain progress lines when the output is not a terminal (CI, nohup, a pipe).
DEFAULT_LINE_INTERVAL = 30.0
LINE_INTERVAL_ENV = "PRIVASIS_PROGRESS_INTERVAL"
_WRITE_LOCK = threading.Lock()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


def line_interval() -> float:
    """The plain-line interval: ``PRIVASIS_PROGRESS_INTERVAL`` seconds if set to a positive number, else 30."""
    try:
        value = float(os.environ.get(LINE_INTERVAL_ENV, DEFAULT_LINE_INTERVAL))
    except ValueError:
        return DEFAULT_LINE_INTERVAL
    return value if value > 0 else DEFAULT_LINE_INTERVAL


class StageProgress:
    """One progress display per stage with done / cached / failed / retries / tokens.

    On a terminal (stdout and stderr both) it is a tqdm bar on stderr. Otherwise, when enabled, a plain line
    is written to stderr every :func:`line_interval` seconds while the stage has work under way:
    ``[stage] 12/40 calls done (3 cached, 0 failed), 1,024 tokens, elapsed 1:20, about 3:05 left``; when nothing
    moved since the last line it says what the stage waits for (``..., waiting for answers``). A stage whose calls
    are all done is told once and then stays quiet (it may stay open while later stages run), and its closing line
    is written only when it says something new. The engine updates the counters and calls :meth:`refresh`.
    """

    def __init__(self, desc: str, total: int, enabled: bool) -> None:
        self.bar = None
        self.desc, self.total = desc, total
        self.done = self.cached = self.failed = self.retries = self.tokens = 0
        self.started = time.monotonic()
        self._ticker: threading.Thread | None = None
        self._closed = threading.Event()
        self.lines = 0  # plain lines written (for tests and the final line)
        self._told: tuple[int, ...] | None = None  # the counters of the last plain line
        if not enabled:
            return
        if sys.stderr.isatty() and sys.stdout.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="req", dynamic_ncols=True, leave=True)
        else:
            self._ticker = threading.Thread(target=self._tick, args=(line_interval(),), daemon=True,
                                            name=f"progress-{desc}")
            self._ticker.start()

    def add_total(self, n: int = 1) -> None:
        """The stage learned of ``n`` more requests."""
        self.total += n
        if self.bar is not None:
            self.bar.total = (self.bar.total or 0) + n

    def status_line(self) -> str:
        """The plain progress line for the counters as they are now."""
        elapsed = time.monotonic() - self.started
        fresh = self.done - self.cached
        line = (f"[{self.desc}] {self.done}/{self.total} calls done ({self.cached} cached, {self.failed} failed), "
                f"{self.tokens:,} tokens, elapsed {_clock(elapsed)}")
        left = self.total - self.done
        if 0 < fresh and left > 0:
            line += f", about {_clock(elapsed / fresh * left)} left"
        return line

    def _state(self) -> tuple[int, ...]:
        return (self.total, self.done, self.cached, self.failed, self.retries, self.tokens)

    def _tick(self, interval: float) -> None:
        while not self._closed.wait(interval):
            if not (self.total or self.done):  # a stage with nothing to do yet stays quiet
                continue
            state = self._state()
            if state != self._told:
                self._told = state
                self._write(self.status_line())
            elif self.done < self.total:  # nothing moved: say what it waits for
                self._write(self.status_line() + ", waiting for answers")
            # all done and told: quiet until something changes

    def _write(self, line: str) -> None:
        self.lines += 1
        with _WRITE_LOCK:  # stages running side by side write whole lines, never interleaved
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def refresh(self, advance: int = 0) -> None:
        """Redraw the counters, moving the bar forward by ``advance`` finished requests."""
        if self.bar is None:
            return
        postfix = {"done": self.done, "cached": self.cached, "failed": self.failed, "retries": self.retries,
                   "tokens": self.tokens}
        self.bar.set_postfix(postfix, refresh=False)  # a mapping keeps this order (keywords get sorted)
        if advance:
            self.bar.update(advance)
        else:
            self.bar.refresh()

    def note(self, message: str) -> None:
        """Print one line on stderr (above the bar when there is one), whether or not bars are shown."""
        if self.bar is not None:
            self.bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr, flush=True)

    def close(self) -> None:
        """Leave the final state on screen (a last plain line when the stage printed lines and did any work)."""
        if self.bar is not None:
            self.bar.close()
        if self._ticker is not None and not self._closed.is_set():
            self._closed.set()
            if self.lines and self.done and self._state() != self._told:
                self._told = self._state()
                self._write(self.status_line())
