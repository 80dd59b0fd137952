"""The committed re-judge report (leaderboards/rejudge.json): shown on the board, read strictly, checked in CI."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from leaderboard_fakes import TASK, PinnedNameJudge, invoke, scrubber_dir

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.adapters.base import ChatRequest, ChatResult
from privasis_bench.leaderboard.build import build_board, check_board
from privasis_bench.leaderboard.rejudge import judged_attributes
from privasis_bench.leaderboard.rejudge_report import ReportError, read_report
from privasis_bench.results.files import dumps_json

SCRUBBER, IDENTITY = "baselines/regex-scrubber", "baselines/identity"


class CountingJudge(PinnedNameJudge):
    """The pinned judge's stand-in, counting the questions it is asked."""

    calls: list[str] = []

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        CountingJudge.calls.append(request.messages[0][1])
        return await super().agenerate(request)


class YesJudge(PinnedNameJudge):
    """A judge that is not the one the report was written with: it answers YES to everything."""

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        return ChatResult(text="YES")


@pytest.fixture
def judge(monkeypatch):
    CountingJudge.calls = []
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: CountingJudge(spec.model))
    return CountingJudge


def _report(subs: Path, path: Path, *extra: str) -> dict:
    invoke("leaderboard", "verify", str(subs), "--seed", "7", "--report", str(path), *extra)
    return json.loads(path.read_text())


def _pool(subs: Path) -> int:
    rows = [json.loads(x) for x in (scrubber_dir(subs) / "samples.jsonl").read_text().splitlines()]
    return len(judged_attributes(rows))


def test_the_board_shows_each_entry_agreement_from_the_committed_report(subs, judge, tmp_path):
    out = tmp_path / "board"
    out.mkdir()
    report = _report(subs, out / "rejudge.json")
    build_board(subs, out)
    board = json.loads((out / "privasis.json").read_text())
    rows = {e["name"]: e for e in board["entries"]}
    committed = next(e for e in report["entries"] if e["name"] == SCRUBBER)["agreement"]
    assert rows[SCRUBBER]["rejudge_agreement"] == committed and rows[IDENTITY]["rejudge_agreement"] is None
    assert set(committed) >= {"judge", "seed", "sample_size", "pool", "asked", "agreed", "by_kind"}
    assert committed["seed"] == 7 and committed["judge"] == "llamacpp:smollm2" and committed["sample_size"] == 90
    assert board["built"]["rejudge"] == {"report": "rejudge.json"}  # each agreement carries its own seed
    line = (f"re-judged by llamacpp:smollm2 (seed 7): {committed['agreed']}/{committed['asked']} agree (100.0%) of "
            f"{committed['pool']} judged attributes [")
    assert line in (out / "index.html").read_text() and "(each with its seed; CI re-asks the judge" in (out / "index.html").read_text()
    markdown = (out / "README.md").read_text()
    assert line.replace("[", "\\[") in markdown and "each with the seed it was re-judged with" in markdown
    assert check_board(subs, out) == []  # the report is an input the build keeps: the rebuild equals the board
    first = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    build_board(subs, out)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == first


def test_a_changed_report_makes_the_committed_board_stale(subs, judge, tmp_path):
    out = tmp_path / "board"
    out.mkdir()
    _report(subs, out / "rejudge.json")
    build_board(subs, out)
    _report(subs, out / "rejudge.json", "--rejudge", "40", "--judge", "llamacpp:smollm2")  # other honest numbers
    assert f"{out / 'privasis.json'}: differs from the rebuild" in check_board(subs, out)


def test_report_text_is_escaped_on_the_page_and_in_the_markdown(subs, judge, tmp_path):
    out = tmp_path / "board"
    out.mkdir()
    report = _report(subs, out / "rejudge.json")
    entry = next(e for e in report["entries"] if e["name"] == IDENTITY)
    entry["agreement"] = copy.deepcopy(next(e for e in report["entries"] if e["name"] == SCRUBBER)["agreement"])
    entry["agreement"]["judge"] = "evil|<script>alert(1)</script>`x`"
    (out / "rejudge.json").write_text(dumps_json(report))
    build_board(subs, out)
    html, markdown = (out / "index.html").read_text(), (out / "README.md").read_text()
    assert "<script>alert" not in html and "evil|&lt;script&gt;alert(1)&lt;/script&gt;`x`" in html
    assert "<script>" not in markdown and "evil\\|\\<script\\>alert(1)\\</script\\>\\`x\\`" in markdown


def _edited(path: Path, edit) -> Path:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(dumps_json(data))
    return path


def _scrub(data: dict) -> dict:
    return next(e for e in data["entries"] if e["name"] == SCRUBBER)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format="something/else"), "format is not 'privasis-bench/verify-report/1'"),
    (lambda d: d["entries"].append(dict(_scrub(d), name="ghost/entry")), "names 'ghost/entry' on privasis_sample, "
     "which is not on the board"),
    (lambda d: d["entries"].append(dict(_scrub(d))), "names 'baselines/regex-scrubber' on privasis_sample a second time"),
    (lambda d: _scrub(d)["agreement"].update(unstable=5), "agreement.unstable is 5, more than the 0 disagreement(s)"),
    (lambda d: _scrub(d)["agreement"].update(pool=-1), "agreement.pool is '-1', not a whole number"),
    (lambda d: _scrub(d)["agreement"].update(asked=10**12), "agreement.asked is '1000000000000', not a whole number"),
    (lambda d: _scrub(d)["agreement"].update(rate=99.0), "agreement.rate is '99.0' but the counts give 100.0"),
    (lambda d: _scrub(d)["agreement"].update(agreed=_scrub(d)["agreement"]["agreed"] - 1),
     "do not fit together or with the per-kind counts"),
    (lambda d: _scrub(d)["agreement"]["by_kind"].update(made_up={"asked": 1, "agreed": 1}), "by_kind must map"),
    (lambda d: _scrub(d)["agreement"].update(judge="a\nb"), "agreement.judge is 'a\\nb', not a printable text"),
    (lambda d: _scrub(d).update(ok=False), "did not pass verify"),
], ids=["format", "not-on-board", "twice", "unstable", "negative", "huge", "rate", "sums", "kind", "control", "not-ok"])
def test_a_malformed_or_foreign_report_is_refused_in_one_line(subs, judge, tmp_path, edit, message):
    out = tmp_path / "board"
    out.mkdir()
    path = out / "rejudge.json"
    _report(subs, path)
    _edited(path, edit)
    with pytest.raises(ReportError) as caught:
        build_board(subs, out)
    text = str(caught.value)
    assert "\n" not in text.replace("'a\\nb'", "") and text.startswith(f"{path}: ") and message in text, text


def test_a_report_that_is_not_strict_json_is_refused(tmp_path):
    for payload, message in [("{\"format\": NaN}", "NaN"), ("[" * 100 + "]" * 100, "nested too deeply"),
                             ("\x00\xff", "not UTF-8"), ("{not json", "invalid JSON")]:
        path = tmp_path / "rejudge.json"
        path.write_bytes(payload.encode("latin-1"))
        with pytest.raises(ReportError, match=re.escape(message)):
            read_report(path)
    (tmp_path / "link.json").symlink_to(path)
    with pytest.raises(ReportError, match="a symbolic link"):
        read_report(tmp_path / "link.json")


def test_check_report_passes_an_honest_report_and_asks_nothing_new_for_a_pool_re_asked_whole(subs, judge, tmp_path):
    n = str(_pool(subs) + 5)  # both passes re-ask the whole pool: the check's questions are all in memory
    path = tmp_path / "rejudge.json"
    _report(subs, path, "--rejudge", n, "--judge", "llamacpp:smollm2")
    judge.calls = []
    out = invoke("leaderboard", "verify", str(subs), "--rejudge", n, "--judge", "llamacpp:smollm2",
                 "--check-report", str(path)).output
    assert f"{path}: 2 committed re-judge(s) re-asked with their own seeds, 0 problem(s), 0 judge call(s) beyond" in out
    assert len(judge.calls) == len(set(judge.calls)) > 0  # the fresh pass asked each question once, the check none


def test_check_report_with_a_sample_smaller_than_the_pool(subs, judge, tmp_path):
    path = tmp_path / "rejudge.json"
    report = _report(subs, path)
    committed = _scrub(report)["agreement"]
    assert committed["pool"] > committed["sample_size"]  # a sample: another seed draws other attributes
    judge.calls = []
    out = invoke("leaderboard", "verify", str(subs), "--check-report", str(path)).output
    extra = int(re.search(r"0 problem\(s\), (\d+) judge call\(s\) beyond", out).group(1))
    assert 0 < extra <= len(judge.calls) and len(judge.calls) == len(set(judge.calls))


def test_check_report_names_the_entry_whose_committed_numbers_differ(subs, judge, tmp_path, monkeypatch):
    path = tmp_path / "rejudge.json"
    _report(subs, path)
    _edited(path, lambda d: _scrub(d)["agreement"].update(pool=_scrub(d)["agreement"]["pool"] + 1))
    out = invoke("leaderboard", "verify", str(subs), "--check-report", str(path), expect=1).output
    (line,) = [x for x in out.splitlines() if x.startswith("FAIL ")]
    assert line.startswith(f"FAIL {path}: {SCRUBBER} on {TASK}: the report says re-judged by llamacpp:smollm2 (seed 7)")
    assert "; re-asking with seed 7 gives re-judged by" in line
    _edited(path, lambda d: _scrub(d)["agreement"].update(pool=_scrub(d)["agreement"]["pool"] - 1))
    monkeypatch.setattr(runner_mod, "build_adapter", lambda spec: YesJudge(spec.model))  # another judge: other answers
    out = invoke("leaderboard", "verify", str(subs), "--check-report", str(path), expect=1).output
    assert any(x.startswith(f"FAIL {path}: {SCRUBBER} on {TASK}: the report says") for x in out.splitlines())


def test_check_report_fails_for_an_entry_that_is_not_among_the_submissions(subs, judge, tmp_path):
    path = tmp_path / "rejudge.json"
    _report(subs, path)
    _edited(path, lambda d: d["entries"].append(dict(_scrub(d), name="ghost/entry")))
    out = invoke("leaderboard", "verify", str(subs), "--check-report", str(path), expect=1).output
    assert f"FAIL {path}: entries[2] names 'ghost/entry' on {TASK}, which is not among the verified submissions" in out
