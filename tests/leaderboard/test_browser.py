"""A real browser (Debian chromium via Playwright) opens the board and a viewer page from disk.

It checks the page at three widths (no horizontal overflow, ranked tables visible), sorts a table and checks
the order, toggles filters, follows a viewer link, checks that no
request leaves the page, and saves screenshots as test artifacts (``$PRIVASIS_TEST_ARTIFACTS`` or
``test-artifacts/``). In CI a missing browser fails; elsewhere the test is skipped.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from leaderboard_fakes import TASK, invoke, make_runs

from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.submit import submit_run

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


def _numbers(table, column: int) -> list[float]:
    cells = table.locator(f"tbody:not(.apart) tr td:nth-child({column})")  # degenerate baselines stay apart
    return [float(v) for v in cells.evaluate_all("cs => cs.map(c => c.getAttribute('data-v'))")]


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """The two test entries plus ``empty`` judged by the pinned judge's name: two verified rows, one self-reported."""
    base = tmp_path_factory.mktemp("browser")
    mp = pytest.MonkeyPatch()
    try:
        made = make_runs(base, mp)
        invoke("run", "-m", "empty", "--judge", "llamacpp:smollm2", "-o", str(base / "runs/empty"), "--tasks", TASK,
               "--no-progress", "--cache-dir", str(base / "cache"), "--max-off-label", "100000")
        submit_run(base / "runs/empty", "baselines/empty", track="verified", root=made["submissions"])
        yield build_board(made["submissions"], base / "board")
    finally:
        mp.undo()


@pytest.mark.parametrize("width", [390, 1024, 1400])
def test_board_fits_every_width_with_visible_ranked_tables(browser, board, width):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(board.html.resolve().as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    widest = page.evaluate("Math.max(...[...document.querySelectorAll('table.board, section')]"
                           ".map(e => e.getBoundingClientRect().right))")
    assert widest <= width
    tables = page.locator("div.group table.board")  # the cross-task table is not a group
    assert tables.count() == 2 and all(tables.nth(i).is_visible() for i in range(2))
    first_rank = page.locator("table.board tbody tr td.rank").first
    assert first_rank.is_visible() and first_rank.inner_text().strip() in ("1", "1=")  # "1=": tied on the headline
    if width >= 1024:
        assert page.locator("table.board thead th.rank").first.is_visible()
    page.screenshot(path=str(ARTIFACTS / f"leaderboard-{width}px.png"), full_page=True)
    page.close()


def test_board_and_viewer_in_a_real_browser(browser, board):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    outside: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("request", lambda r: None if r.url.startswith("file://") else outside.append(r.url))
    page.goto(board.html.resolve().as_uri())
    verified = page.locator("section.track-verified table.board")
    headers = [h.strip() for h in verified.locator("thead th").all_inner_texts()]
    assert headers[0] == "#" and "Full Successful Record" in headers
    column = headers.index("San. Attr") + 1
    ranks = [r.strip() for r in verified.locator("tbody td.rank").all_inner_texts()]
    assert ranks[0] in ("1", "1=") and len(ranks) == 2

    verified.locator("thead th", has_text="San. Attr").click()
    down = _numbers(verified, column)
    assert len(down) == 1 and down == sorted(down, reverse=True)  # ``empty`` is listed apart, never sorted in
    verified.locator("thead th", has_text="San. Attr").click()
    assert _numbers(verified, column) == sorted(down)
    page.screenshot(path=str(ARTIFACTS / "leaderboard-sorted.png"), full_page=True)

    page.select_option("#filter-track", "verified")
    assert page.locator("div.group:not(.hidden) table.board").count() == 1
    assert page.locator("div.group.hidden").count() == 1
    page.select_option("#filter-track", "")
    page.select_option("#filter-task", TASK)
    assert page.locator("div.group:not(.hidden) tbody tr[data-search]").count() == 3
    page.select_option("#filter-track", "self-reported")
    assert page.locator("div.group:not(.hidden) tbody tr[data-search]").count() == 1
    page.select_option("#filter-track", "verified")
    page.screenshot(path=str(ARTIFACTS / "leaderboard-filtered.png"), full_page=True)

    page.locator("tbody tr", has_text="baselines/regex-scrubber").locator("a", has_text="records").click()
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
    shutil.copy(board.html, ARTIFACTS / "index.html")


REPO = Path(__file__).resolve().parents[2]


def test_the_committed_board_shows_every_family_and_its_viewers_fit_a_phone(browser):
    """Issue 41/42: TAB rows are on the page itself (not a link to Markdown) and in its task filter; every viewer
    page (Privasis and TAB) fits a 390 px phone and links back to the board."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    board = REPO / "leaderboards" / "index.html"
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(board.resolve().as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.select_option("#filter-task", "tab_sample")
    shown = page.locator("div.group:not(.hidden)")
    assert shown.count() == 1 and shown.first.get_attribute("data-family") == "tab"
    tab_entries = len(list(REPO.glob("submissions/*/tab_sample/submission.json")))
    assert tab_entries >= 3 and shown.locator("tbody tr[data-search]").count() == tab_entries and "Token recall" in shown.inner_text()
    page.screenshot(path=str(ARTIFACTS / "leaderboard-tab-390px.png"), full_page=True)
    viewers = sorted((REPO / "leaderboards" / "view").glob("*.html"))
    assert any("tab_sample" in v.name for v in viewers) and any("privasis_sample" in v.name for v in viewers)
    for viewer in viewers:
        page.goto(viewer.resolve().as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, viewer.name
        page.screenshot(path=str(ARTIFACTS / f"viewer-390px-{viewer.stem}.png"))
        page.locator("a", has_text="back to the board").first.click()
        page.wait_for_load_state()
        assert page.url.endswith("/leaderboards/index.html")
    page.close()
