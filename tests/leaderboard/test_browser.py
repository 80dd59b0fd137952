"""A real browser (Debian chromium via Playwright) opens the board and a viewer page from disk.

It sorts by Full Successful Record and checks the order, toggles filters, follows a viewer link, checks that no
request leaves the page, and saves screenshots as test artifacts (``$PRIVASIS_TEST_ARTIFACTS`` or
``test-artifacts/``). In CI a missing browser fails; elsewhere the test is skipped.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from leaderboard_fakes import TASK, make_runs

from privasis_bench.leaderboard.build import build_board

CHROMIUM = os.environ.get("PRIVASIS_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("PRIVASIS_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture(scope="module")
def browser():
    missing = None if Path(CHROMIUM).is_file() else f"no chromium at {CHROMIUM}"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = missing or "playwright is not installed"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} (.ci/install-test-deps installs it)")
        pytest.skip(missing)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _numbers(page, column: int) -> list[float]:
    cells = page.locator(f"#board tbody tr:not(.hidden) td:nth-child({column})")
    return [float(v) for v in cells.evaluate_all("cs => cs.map(c => c.getAttribute('data-v'))")]


def test_board_and_viewer_in_a_real_browser(browser, tmp_path, monkeypatch):
    made = make_runs(tmp_path, monkeypatch)
    files = build_board(made["submissions"], tmp_path / "board")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    outside: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("request", lambda r: None if r.url.startswith("file://") else outside.append(r.url))
    page.goto(files.html.resolve().as_uri())
    headers = page.locator("#board thead th")
    column = [h.strip() for h in headers.all_inner_texts()].index("Full Successful Record") + 1

    page.locator("#board thead th", has_text="Full Successful Record").click()
    down = _numbers(page, column)
    assert len(down) == 2 and down == sorted(down, reverse=True)  # one task per entry: no overall rows
    page.locator("#board thead th", has_text="Full Successful Record").click()
    assert _numbers(page, column) == sorted(down)
    page.screenshot(path=str(ARTIFACTS / "leaderboard-sorted.png"), full_page=True)

    page.select_option("#filter-track", "verified")
    tracks = page.locator("#board tbody tr:not(.hidden) td:nth-child(3)").all_inner_texts()
    assert tracks and set(t.strip() for t in tracks) == {"verified"}
    assert page.locator("#board tbody tr.hidden").count() == 1
    page.select_option("#filter-track", "")
    page.select_option("#filter-task", TASK)
    assert page.locator("#board tbody tr:not(.hidden)").count() == 2
    page.select_option("#filter-track", "verified")
    assert page.locator("#board tbody tr:not(.hidden)").count() == 1
    page.screenshot(path=str(ARTIFACTS / "leaderboard-filtered.png"), full_page=True)

    page.locator("#board tbody tr:not(.hidden) a", has_text="records").click()
    page.wait_for_load_state()
    assert "/view/" in page.url and page.locator("article").count() == 29
    page.select_option("#filter-tier", "proximity")
    visible = page.locator("#records article:not(.hidden)")
    assert 0 < visible.count() < 29
    assert all("proximity" in t.split() for t in visible.evaluate_all("as => as.map(a => a.dataset.tiers)"))
    assert page.locator("#shown").inner_text().endswith("of 29 records shown")
    page.screenshot(path=str(ARTIFACTS / "viewer-proximity.png"))

    # The instruction the model was given, with the attributes it names, above the two texts.
    first = page.locator("#records article:not(.hidden)").first
    instruction = first.locator(".instruction")
    assert instruction.is_visible() and "Instruction (base)" in instruction.inner_text()
    assert instruction.locator(".instruction-text").inner_text().strip()
    assert "targets:" in instruction.inner_text() and "keep:" in instruction.inner_text()
    # The diff toggle swaps the highlighted sanitized text for a word diff against the original.
    assert first.locator("pre.plain").is_visible() and not first.locator("pre.diff").is_visible()
    page.check("#toggle-diff")
    assert first.locator("pre.diff").is_visible() and not first.locator("pre.plain").is_visible()
    assert first.locator("pre.diff del, pre.diff ins").count() > 0
    page.screenshot(path=str(ARTIFACTS / "viewer-diff.png"))
    page.uncheck("#toggle-diff")
    assert first.locator("pre.plain").is_visible()
    assert outside == []
    shutil.copy(files.html, ARTIFACTS / "index.html")
