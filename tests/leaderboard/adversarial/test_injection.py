"""Attack class *injection*: a hostile string pushed through every field each rendered format shows (the HTML page,
the Privasis and TAB per-record viewers, the Markdown board) never becomes markup, a link or a broken table."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from adversarial_kit import REPO, read_json, rows_of

from privasis_bench.leaderboard.build import board_parts, board_rows
from privasis_bench.leaderboard.families.span_viewer import write_span_viewer
from privasis_bench.leaderboard.markdown import readme
from privasis_bench.leaderboard.page import render_board
from privasis_bench.leaderboard.viewer import write_viewer

HOSTILE = "\"'><img src=x onerror=alert(1)><script>alert(1)</script> | **b** [l](javascript:x) https://e.vil\n| x |"
#: Row fields the renderers read as structure, not text (every other leaf is replaced).
STRUCTURE = {"family", "group", "rank", "tied", "rankable", "partial", "gold_reading", "reference", "rejudged"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [name for name, _ in attrs]


def _tags(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    return parser


def _hostile(value, key=""):
    if key in STRUCTURE:
        return value
    if isinstance(value, dict):
        return {k: _hostile(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_hostile(v) for v in value] or [HOSTILE]
    if value is None or isinstance(value, bool):
        return HOSTILE if value is None else value
    return HOSTILE


@pytest.fixture(scope="module")
def rows(committed_verdicts):
    accepted = [v for v in committed_verdicts if v.ok]
    links = {v.path: {"files": "../submissions/x/", "history": "#owner-x",
                      "downloads": {"csv": "data/x.csv", "json": "data/x.json", "hub": "data/x.yaml", "eee": "data/e.json",
                                    "missing": {"hub": "why"}}} for v in accepted}
    return board_rows(accepted, {v.path: "view/x.html" for v in accepted}, links)


def _clean_html(html: str, benign: str) -> None:
    assert "<img" not in html and "<script>alert" not in html and "onerror" not in _tags(html).attrs
    assert _tags(html).tags.count("script") == _tags(benign).tags.count("script")  # only the page's own scripts
    assert not any(re.match(r"\s*javascript:", h, re.I) for h in re.findall(r"href='([^']*)'", html))


def test_every_field_of_every_family_row_is_escaped_on_the_page(rows):
    assert {r["family"] for r in rows} == {"privasis", "tab", "tab_replacement", "spia"}
    hostile = [_hostile(r) for r in rows]
    built = {"date": HOSTILE, "harness_version": HOSTILE, "rejudge": {"report": HOSTILE, "seed": HOSTILE}}
    benign = render_board(rows, {"date": "d", "harness_version": "v"}, board_parts(rows))
    page = render_board(hostile, built, board_parts(hostile))
    _clean_html(page, benign)
    # the page's one script is the shipped file, and its Content-Security-Policy lets nothing inline run
    assert re.findall(r"<script[^>]*>", page) == ['<script src="board.js">']
    assert "script-src 'self';" in page and page.count("Content-Security-Policy") == 1


def test_every_field_of_every_family_row_is_escaped_in_markdown(rows):
    hostile = [_hostile(r) for r in rows]
    text = readme(hostile, [{"path": HOSTILE, "problems": HOSTILE}],
                  {"date": HOSTILE, "harness_version": HOSTILE, "rejudge": {"seed": HOSTILE}})
    for raw in (r"(?<!\\)<img", r"(?<!\\)<script", r"(?<!\\)\]\(javascript", "https://e"):
        assert not re.search(raw, text), raw  # every special character arrives backslash-escaped
    header_pipes = None
    for line in text.splitlines():
        if line.startswith("| rank"):
            header_pipes = len(re.findall(r"(?<!\\)\|", line))
        elif line.startswith("|") and header_pipes is not None:
            assert len(re.findall(r"(?<!\\)\|", line)) == header_pipes, line  # no cell ends the table early
        elif not line.startswith("|"):
            header_pipes = None if not line.strip() else header_pipes


def _hostile_copy(tmp_path: Path, entry: str, task: str) -> Path:
    folder = Path(shutil.copytree(REPO / "submissions" / entry / task, tmp_path / entry / task))
    res = read_json(folder / "results.json")
    res["model"]["label"] = HOSTILE
    (folder / "results.json").write_text(json.dumps(res), encoding="utf-8")
    rows = rows_of(folder)
    for row in rows:
        for key in ("output", "error", "category", "raw_output", "span_source"):
            if key in row or key in ("output", "error"):
                row[key] = HOSTILE
        for item in (*row.get("targets", []), *row.get("keep", [])):
            for key in ("value", "guess", "compare_answer", "inclusion_answer", "name"):
                item[key] = HOSTILE
        for missed in row.get("missed") or []:
            missed.update(annotator=HOSTILE, entity_type=HOSTILE, identifier_type=HOSTILE)
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.mark.parametrize("entry,task,writer", [("baselines__identity", "privasis_sample", write_viewer),
                                               ("microsoft__presidio", "tab_sample", write_span_viewer),
                                               ("microsoft__presidio", "tab_replacement_sample", write_span_viewer)])
def test_every_field_a_viewer_shows_is_escaped(tmp_path, entry, task, writer):
    benign = writer(REPO / "submissions" / entry / task, tmp_path / "benign.html", title="t", back="../index.html")
    folder = _hostile_copy(tmp_path, entry, task)
    page = writer(folder, tmp_path / "page.html", title=HOSTILE, back=HOSTILE).read_text(encoding="utf-8")
    _clean_html(page, benign.read_text(encoding="utf-8"))
