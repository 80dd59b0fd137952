"""Outside a terminal (CI, nohup, a pipe) a long stage prints a plain progress line at a steady interval."""

from __future__ import annotations

import threading

from privasis_bench.engine import progress
from privasis_bench.engine.progress import StageProgress


def _not_a_terminal(monkeypatch) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)


def test_plain_lines_at_the_interval_then_a_final_line(monkeypatch, capsys) -> None:
    _not_a_terminal(monkeypatch)
    monkeypatch.setenv(progress.LINE_INTERVAL_ENV, "0.02")
    two_lines = threading.Event()
    write = StageProgress._write

    def counting_write(self: StageProgress, line: str) -> None:
        write(self, line)
        if self.lines >= 2:
            two_lines.set()

    monkeypatch.setattr(StageProgress, "_write", counting_write)
    stage = StageProgress("judge", 0, enabled=True)
    assert stage.bar is None
    for _ in range(10):
        stage.add_total(1)
    stage.done, stage.cached, stage.failed, stage.tokens = 3, 2, 1, 1000
    assert two_lines.wait(10), "no periodic progress line"
    stage.done, stage.tokens = 4, 1234  # moved since the last line: the closing line says so
    stage.close()
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[judge]")]
    assert len(lines) >= 3  # at least two periodic lines and the final one
    assert lines[-1].startswith("[judge] 4/10 calls done (2 cached, 1 failed), 1,234 tokens, elapsed 0:0")
    assert "left" in lines[-1]  # 2 fresh calls done, 6 to go: an estimate


def test_no_lines_when_disabled_or_on_a_terminal(monkeypatch, capsys) -> None:
    _not_a_terminal(monkeypatch)
    monkeypatch.setenv(progress.LINE_INTERVAL_ENV, "0.01")
    stage = StageProgress("model", 3, enabled=False)
    assert stage._ticker is None
    stage.close()
    assert capsys.readouterr().err == ""


def test_interval_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(progress.LINE_INTERVAL_ENV, "5")
    assert progress.line_interval() == 5.0
    for bad in ("0", "-1", "soon"):
        monkeypatch.setenv(progress.LINE_INTERVAL_ENV, bad)
        assert progress.line_interval() == progress.DEFAULT_LINE_INTERVAL


def _lines_after(monkeypatch, stage: StageProgress, n: int) -> threading.Event:
    """An event set once ``stage`` has been given ``n`` more ticks (written or not)."""
    ticks = threading.Event()
    seen = {"n": 0}
    state = StageProgress._state

    def counting_state(self: StageProgress) -> tuple[int, ...]:
        if self is stage:
            seen["n"] += 1
            if seen["n"] >= n:
                ticks.set()
        return state(self)

    monkeypatch.setattr(StageProgress, "_state", counting_state)
    return ticks


def test_a_finished_stage_is_told_once_and_a_stuck_one_says_it_waits(monkeypatch, capsys) -> None:
    _not_a_terminal(monkeypatch)
    monkeypatch.setenv(progress.LINE_INTERVAL_ENV, "0.01")
    done = StageProgress("model", 3, enabled=True)
    done.done = 3
    ticks = _lines_after(monkeypatch, done, 20)
    assert ticks.wait(10)
    done.close()
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[model]")]
    assert lines == ["[model] 3/3 calls done (0 cached, 0 failed), 0 tokens, elapsed " + lines[0].rsplit(" ", 1)[1]], lines
    stuck = StageProgress("judge", 4, enabled=True)
    stuck.done = 1
    ticks = _lines_after(monkeypatch, stuck, 5)
    assert ticks.wait(10)
    stuck.close()
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[judge]")]
    assert len(lines) >= 2 and "waiting" not in lines[0] and lines[1].endswith(", waiting for answers"), lines
