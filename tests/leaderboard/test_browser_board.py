"""Issue 54.3 in a real browser (Debian chromium via Playwright): the committed board at 1280 px and 390 px.

The page's one script is a file beside it and the Content-Security-Policy lets nothing else run: an injected inline
script and an injected event handler, written raw into a copy of the page, stay inert while the board's own script
still sorts, filters and searches. The replacement-quality group shows its frontier (no rank), degenerate baselines
are listed apart, labels in the frontier chart do not overlap, column headers do not break inside a word, and every
row links to its viewer, files, history and downloads. Screenshots go to the test artifacts.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_browser import ARTIFACTS, browser  # noqa: F401 - the shared Chromium fixture

REPO = Path(__file__).resolve().parents[2]
BOARD = REPO / "leaderboards"

pytestmark = [pytest.mark.slow, pytest.mark.integration]

#: No two boxes overlap (a small tolerance for anti-aliasing).
OVERLAPS = """els => { const b = els.map(e => e.getBoundingClientRect()); let n = 0;
  for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++)
    if (b[i].left < b[j].right - 1 && b[j].left < b[i].right - 1 && b[i].top < b[j].bottom - 1 && b[j].top < b[i].bottom - 1) n++;
  return n; }"""
#: Header cells whose text wraps inside a word (a word's letters split across two lines).
BROKEN_WORDS = """ths => ths.filter(th => getComputedStyle(th).display !== 'none' && th.offsetParent !== null).flatMap(th => {
  const out = []; const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) { const node = walker.currentNode; const text = node.textContent;
    for (const m of text.matchAll(/\\S+/g)) { const r = document.createRange();
      r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      if (r.getClientRects().length > 1) out.push(m[0]); } }
  return out; })"""


#: Table cells (visible ones) whose content is wider than the cell: text that spills into the next column.
SPILLS = """cells => cells.filter(td => td.offsetParent !== null && td.scrollWidth > td.clientWidth + 1)
  .map(td => td.textContent.trim().slice(0, 60))"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_committed_board_at_desktop_and_phone_width(browser, width):  # noqa: F811
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": width, "height": 900})
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith("file://") else outside.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((BOARD / "index.html").as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.locator("#shown-count").inner_text().endswith("rows shown")  # the script ran
    # The replacement group: a frontier, no rank; degenerate baselines apart with their reason.
    group = page.locator("div.group[data-family='tab_replacement']").first
    assert "No single rank" in group.locator("p.order").inner_text()
    assert group.locator("tbody.apart tr.degenerate").count() == 2
    assert "deletes everything" in group.locator("tbody.apart").inner_text()
    assert group.locator("tbody:not(.apart) td.rank", has_text="★").count() >= 1
    labels = group.locator("svg.frontier text.label")
    assert labels.count() >= 8 and labels.evaluate_all(OVERLAPS) == 0
    assert "presidio:,operator=redact" in group.inner_text()  # model arguments stay in labels
    # The Privasis sample groups where every entry ties at 0: no rank, and the page says why.
    privasis = page.locator("div.group[data-family='privasis']")
    assert "no order to show" in privasis.nth(1).locator("p.order").inner_text()
    assert "presidio:,nlp=none" in page.inner_text("body")
    if width >= 1280:
        assert page.locator("table.board thead th").evaluate_all(BROKEN_WORDS) == []
        # No cell's text runs into the next column (an interval such as "[100.00, 100.00]" did, issue 54).
        assert page.locator("table.board td").evaluate_all(SPILLS) == []
    else:  # cards on a phone: the cell labels and the tables of published figures must not split words either
        assert page.locator("table.paper thead th, table.cross thead th").evaluate_all(BROKEN_WORDS) == []
    page.screenshot(path=str(ARTIFACTS / f"board-{width}px.png"), full_page=True)
    row = page.locator("tr[id]", has_text="microsoft/presidio-redact").first
    hrefs = row.locator("td.link a").evaluate_all("as => as.map(a => [a.textContent, a.getAttribute('href')])")
    got = dict(hrefs)
    assert set(got) >= {"records", "files", "history", "CSV", "JSON", "EEE"}
    for text in ("records", "CSV", "JSON", "EEE"):
        assert (BOARD / got[text]).is_file(), got[text]
    assert (BOARD / got["files"]).is_dir() and page.locator(got["history"]).count() == 1
    assert got["history"].startswith("#entry-")  # the entry's own line of history, not its owner's
    assert outside == [] and errors == []
    page.close()


def test_filters_search_and_sorting_work_and_the_csp_stops_injected_script(browser, tmp_path):  # noqa: F811
    copy = tmp_path / "leaderboards"
    shutil.copytree(BOARD, copy, ignore=shutil.ignore_patterns("view"))
    html = (copy / "index.html").read_text(encoding="utf-8")
    hostile = ("<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
               "<svg onload=\"document.title='pwned'\"></svg>")
    (copy / "index.html").write_text(html.replace("<main>", "<main>" + hostile, 1), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto((copy / "index.html").as_uri())
    page.wait_for_timeout(300)
    assert page.title() == "privasis-bench leaderboard"  # nothing injected ran
    page.select_option("#filter-family", "tab")
    assert {g.get_attribute("data-family") for g in page.locator("div.group:not(.hidden)").all()} == {"tab"}
    page.select_option("#filter-family", "")
    page.select_option("#filter-judge", "llamacpp:smollm2")
    assert {g.get_attribute("data-family") for g in page.locator("div.group:not(.hidden)").all()} == {"privasis"}
    page.select_option("#filter-judge", "")
    page.fill("#search", "scrubadub")
    shown = page.locator("div.group:not(.hidden) tbody tr[data-search]:not(.hidden)")
    assert shown.count() >= 1 and all("scrubadub" in t for t in shown.all_inner_texts())
    page.fill("#search", "")
    table = page.locator("div.group[data-task='tab_sample'] table.board").first
    header = table.locator("thead th", has_text="Token precision").first
    column = table.locator("thead th").all_inner_texts().index(header.inner_text()) + 1
    header.click()
    values = [float(v) for v in table.locator(f"tbody:not(.apart) tr td:nth-child({column})").evaluate_all(
        "cs => cs.map(c => c.getAttribute('data-v'))")]
    assert values == sorted(values, reverse=True)
    page.screenshot(path=str(ARTIFACTS / "board-sorted-1280px.png"), full_page=True)
    page.close()
