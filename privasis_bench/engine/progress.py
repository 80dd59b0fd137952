"""Progress display for engine stages."""

from __future__ import annotations

import sys


class StageProgress:
    """One progress bar per stage with done / cached / failed / retries / tokens.

    Silent when disabled or when stderr is not a terminal, so CI logs get no bar updates. The
    engine updates the counters and calls :meth:`refresh`.
    """

    def __init__(self, desc: str, total: int, enabled: bool) -> None:
        self.bar = None
        self.done = self.cached = self.failed = self.retries = self.tokens = 0
        if enabled and sys.stderr.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="req", dynamic_ncols=True, leave=True)

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
        """Leave the final state on screen."""
        if self.bar is not None:
            self.bar.close()
