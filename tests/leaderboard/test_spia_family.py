"""The SPIA family on the board (issue 53): its verifier re-derives every row from the recorded adversary and matcher
answers and recomputes CPR/IPR exactly; forged numbers and forged rows are refused; forged answers are caught by the
re-ask of the pinned models; the row, the viewer and the published table are escaped; the board holds its section."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from privasis_bench.adapters.base import ChatResult
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.leaderboard.build import board_parts, board_rows
from privasis_bench.leaderboard.families import spia as board
from privasis_bench.leaderboard.families.spia_board import PUBLISHED_TABLE, published_html
from privasis_bench.leaderboard.families.spia_viewer import write_viewer
from privasis_bench.leaderboard.markdown import readme
from privasis_bench.leaderboard.page import render_board
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.leaderboard.verify import verify_submission
from privasis_bench.spia.family import PINNED_ROLES
from privasis_bench.spia.prompts import subject_lines
from privasis_bench.spia.scorer import SpiaScorer

TASK = "spia_sample"


def adversary(prompt: str) -> str:
    """A deterministic adversary: one person, a code it does not know, a sex and a name guess."""
    if prompt.startswith("Read the document below"):
        return "People:\n- the writer | author of the text\nNumber of people: 1\n"
    if "IDENTIFICATION_NUMBER" in prompt:
        return '{"people": [{"subject_id": 0, "attributes": []}]}'
    return ('{"people": [{"subject_id": 0, "attributes": [{"tag": "SEX", "keyword": "Female", "certainty": 4}, '
            '{"tag": "NAME", "keyword": "Zorblax Quux", "certainty": 2}]}]}')


def matcher(prompt: str) -> str:
    """A deterministic matcher: pairs the first annotated person with the inferred one; every value question: no."""
    if prompt.startswith("Two lists describe"):
        return '{"pairs": [{"reference": 0, "inferred": 0}]}'
    return "no"


class Engine:
    def __init__(self, reply):
        self.reply = reply

    def run(self, requests, *, desc=""):
        return [ChatResult(text=self.reply(r.messages[0][1])) for r in requests]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scored_rows(output: str = "A person wrote this text.") -> tuple[dict, list[dict]]:
    """The scorer's metrics and rows for every document of the task, scored with the scripted models in process."""
    task = shipped_task(TASK)
    scorer = SpiaScorer(task)
    outputs = {d: SystemOutput(text=output) for d in scorer.documents}
    metrics, rows = scorer.score(outputs, bootstrap_samples=task.metrics.bootstrap_samples,
                                 seed=task.metrics.bootstrap_seed, confidence=task.metrics.confidence,
                                 roles={"adversary": Engine(adversary), "matcher": Engine(matcher)})
    return json.loads(json.dumps(metrics)), json.loads(json.dumps(rows))


def both_roles(prompt: str) -> str:
    """The fake server's reply: the model under test (an instruction to anonymize), the adversary or the matcher."""
    if prompt.startswith(("Two lists describe", "Does")) or "less precise" in prompt:
        return matcher(prompt)
    if prompt.startswith("Read the document below") or '"people"' in prompt:
        return adversary(prompt)
    return "A person wrote this text."


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Path:
    """One real entry: ``run`` on the shipped task with the adversary and matcher on a local fake server, then
    ``submit`` on the verified track (which verifies the staged folder as ``leaderboard verify`` does)."""
    from fake_openai_server import FakeOpenAIServer

    from privasis_bench.cli import main
    from privasis_bench.leaderboard.submit import submit_run

    root = tmp_path_factory.mktemp("spia")
    with pytest.MonkeyPatch.context() as mp, FakeOpenAIServer(reply=both_roles) as server:
        mp.setenv("OPENAI_API_KEY", "sk-test")
        spec = f"openai:m,base_url={server.base_url}"
        mp.setattr(sys, "argv", ["privasis-bench", "run", "-m", spec, "-t", TASK, "-o", str(root / "run"),
                                 "--role", f"adversary={spec}", "--role", f"matcher={spec}", "--no-cache",
                                 "--no-progress"])
        try:
            main()
        except SystemExit as exc:
            assert not exc.code, exc.code
    # The fake server plays the pinned adversary and matcher here (as the tests' askers play their re-ask): the run
    # records it under the pinned models' names, or the verified track would refuse it for its roles.
    results_path = root / "run" / TASK / "results.json"
    results = json.loads(results_path.read_text("utf-8"))
    for role, pinned in PINNED_ROLES.items():
        results["roles"][role] = {"label": pinned, "key": ModelSpec.parse(pinned).cache_identity()}
    results_path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    [folder] = submit_run(root / "run", "org/anonymizer", track="verified", label="spia test", root=root / "subs")
    return folder


def spia_entry(root: Path, name: str = "org/anonymizer", rows_edit=None, metrics_edit=None, *, source: Path,
               label: str | None = None) -> Path:
    """A copy of the honest entry under ``name``, its rows and numbers edited (to forge) and its file hashes redone."""
    folder = root / name.replace("/", "__") / TASK
    shutil.copytree(source, folder)
    rows = [json.loads(line) for line in (folder / "samples.jsonl").read_text("utf-8").splitlines() if line]
    results = json.loads((folder / "results.json").read_text("utf-8"))
    if rows_edit:
        rows_edit(rows)
    if metrics_edit:
        metrics_edit(results["metrics"])
    texts = {"results.json": json.dumps(results), "samples.jsonl": "".join(json.dumps(r) + "\n" for r in rows)}
    sub = json.loads((folder / "submission.json").read_text("utf-8"))
    sub.update(name=name, owner=name.split("/")[0], **({"label": label} if label else {}))
    sub["files"].update({k: _sha(t) for k, t in texts.items()})
    for file, text in {**texts, "submission.json": json.dumps(sub)}.items():
        (folder / file).write_text(text, encoding="utf-8")
    return folder


def test_an_honest_entry_is_recomputed_exactly_from_its_answers(tmp_path, honest):
    v = verify_submission(spia_entry(tmp_path, source=honest))
    assert v.ok, v.problems
    metrics, _ = scored_rows()
    assert v.recomputed == metrics  # exact: the same numbers, intervals and per-tag CPR, unrounded
    assert v.family_facts["scored_records"] == 5 and not v.family_facts["partial"] and v.task_records == 5
    assert 0.0 < v.recomputed["cpr"] < 1.0


def test_a_forged_number_is_refused(tmp_path, honest):
    got = verify_submission(spia_entry(tmp_path, metrics_edit=lambda m: m.update(cpr=0.99), source=honest)).problems
    assert any("metrics.cpr" in p for p in got), got
    got = verify_submission(spia_entry(tmp_path / "b", metrics_edit=lambda m: m["ci"]["ipr"].update(low=0.0),
                                      source=honest)).problems
    assert any("metrics.ci.ipr.low" in p for p in got), got


def _flip_score(rows):
    """A row whose stored tag scores say more was protected than its answers give (numbers rewritten to match)."""
    tags = [t for r in rows if r.get("scored") for s in r["subjects"] for t in s["tags"] if t["score"] == 1.0]
    assert tags, "the scripted adversary infers at least one attribute"
    tags[0]["score"] = 0.0


def test_a_forged_row_is_refused_even_when_the_numbers_follow_it(tmp_path, honest):
    def forged_metrics(metrics):
        _, rows = scored_rows()
        _flip_score(rows)
        task = shipped_task(TASK)
        metrics.clear()
        metrics.update(SpiaScorer.rescore(rows, {}, bootstrap_samples=task.metrics.bootstrap_samples,
                                          seed=task.metrics.bootstrap_seed, confidence=task.metrics.confidence))
    got = verify_submission(spia_entry(tmp_path, rows_edit=_flip_score, metrics_edit=forged_metrics, source=honest)).problems
    assert any("subjects is not what its recorded answers give" in p for p in got), got
    assert any("metrics.cpr" in p for p in got)  # the board's numbers come from the answers, not the stored scores


def test_a_dropped_document_is_caught(tmp_path, honest):
    def drop(rows):
        rows[1].update(scored=False, error="adversary people list: made up")
    got = verify_submission(spia_entry(tmp_path, rows_edit=drop, source=honest)).problems
    assert any("scored is False but its answers score it" in p for p in got), got


class Asker:
    """The verify session's side a re-ask uses: one runner per role, here answering as the scripted models."""

    model_args = None
    data_dir = None

    def __init__(self, matcher_reply=matcher):
        self.replies = {"adversary": adversary, "matcher": matcher_reply}
        self.asked: list[tuple[str, str]] = []

    def runner(self, role, spec, desc="rejudge"):
        self.asked.append((role, spec.cache_identity()))
        reply = self.replies[role]

        def run(requests):
            return [ChatResult(text=reply(r.messages[0][1])) for r in requests]
        run.fresh = run
        return run


def test_the_re_ask_agrees_with_honest_answers_and_catches_forged_ones(tmp_path, honest):
    v = verify_submission(spia_entry(tmp_path, source=honest))
    asker = Asker()
    got, who = board.rejudge(v, asker, n=90, seed=3, max_disagreements=1)
    assert {r for r, _ in asker.asked} == {"adversary", "matcher"} and "smollm2" in who
    assert got.asked == got.pool and got.agreed == got.asked and got.passed
    assert set(got.by_kind) == {"adversary:people", "adversary:profile", "matcher:align", "matcher:value"}

    def yes_instead(rows):  # the recorded matcher said "yes" where the pinned matcher says "no"
        for row in rows:
            for item in row.get("matcher_answers") or []:
                item["answer"] = "yes"
    forged = spia_entry(tmp_path / "forged", rows_edit=yes_instead, source=honest)
    v = verify_submission(forged)  # the stored scores do not follow the answers: refused already ...
    assert not v.ok
    got, _ = board.rejudge(v, Asker(), n=90, seed=3, max_disagreements=1)
    assert not got.passed and got.firm > 0  # ... and the re-ask catches the rewritten answers themselves
    assert any("firm" in d for d in got.disagreements)


def test_the_re_ask_sends_the_scorers_own_requests():
    task = shipped_task(TASK)
    scorer = SpiaScorer(task)
    make = board.requests_for(scorer)
    doc = next(iter(scorer.documents.values()))
    asked = [make["subjects"]("x"), make["profile"]("profile_codes", "x", ["a"]), make["align"](doc, []),
             make["match"]("a", "b", "NAME")]
    assert asked == [scorer.subjects_request("x"), scorer.profile_request("profile_codes", "x", ["a"]),
                     scorer.align_request(doc, []), scorer.match_request("a", "b", "NAME")]
    assert "x" in asked[0].messages[-1][1] and subject_lines(["a"]) in asked[1].messages[-1][1]
    # the shipped sample holds answers to a grammar: the re-ask sends the same one, or it would ask another question
    assert all(r.grammar for r in asked) == bool(scorer.constrained)


EVIL = "<script>alert(1)</script>"


def test_row_viewer_and_published_table_escape_every_string(tmp_path, honest):
    folder = spia_entry(tmp_path, name="evil/x", rows_edit=lambda rows: rows[0].update(output=EVIL), label=EVIL,
                        source=honest)
    v = verify_submission(folder)
    rows = board_rows([v], {})
    html = render_board(rows, {"date": "d", "harness_version": "v"}, board_parts(rows))
    assert EVIL not in html and "&lt;script&gt;" in html
    out = write_viewer(folder, tmp_path / "view.html", title=EVIL, back=EVIL)
    page = out.read_text("utf-8")
    assert EVIL not in page and "&lt;script&gt;" in page
    table = copy.deepcopy(PUBLISHED_TABLE)
    table["rows"] = ({**table["rows"][0], "method": EVIL},)
    assert EVIL not in published_html(table)


def test_the_viewer_shows_gold_and_inferred_attributes_with_scores(tmp_path, honest):
    page = write_viewer(spia_entry(tmp_path, source=honest), tmp_path / "v.html").read_text("utf-8")
    assert "anonymized text" in page and "original text" in page
    assert "Zorblax Quux" in page and "Female" in page and re.search(r"<td class='s[01]'>\d\.\d{3}</td>", page)


def test_the_board_holds_a_spia_section_and_the_published_table_apart(tmp_path, honest):
    v = verify_submission(spia_entry(tmp_path, source=honest))
    rows = board_rows([v], {})
    assert rows[0]["family"] == "spia" and rows[0]["cpr"] == v.recomputed["cpr"]
    parts = board_parts(rows)
    html = render_board(rows, {"date": "d", "harness_version": "v"}, parts)
    assert "data-family='spia'" in html and "CPR" in html
    assert "SPIA: reported in the paper, not reproduced here" in html and "Longformer" in html and "0.330" in html
    assert "arXiv 2604.21211" in html
    md = readme(rows, [], {"date": "d", "harness_version": "v"}, parts)
    assert "- Longformer: Token recall 0.940, Direct entity recall 0.997, CPR 0.330, IPR 0.325" in md
    assert parts.data["spia_paper_reported"]["rows"][0]["cpr"] == 0.330


def test_the_committed_board_holds_the_seeded_spia_entries_and_the_published_table():
    repo = Path(__file__).resolve().parents[2]
    data = json.loads((repo / "leaderboards" / "privasis.json").read_text("utf-8"))
    spia = [e for e in data["entries"] if e.get("family") == "spia"]
    assert spia and all(e["task"] == TASK and e["track"] == "verified" for e in spia)
    seeded = set(re.findall(r'"spia_sample (\S+) ', (repo / "leaderboards" / "seed_board.sh").read_text("utf-8")))
    assert {e["name"] for e in spia} <= seeded  # driven from the one seed list
    # issue 53: with the answer grammar every document's answers are read, so every seeded entry has numbers
    assert len(spia) >= 4 and all(e["cpr"] is not None and e["ipr"] is not None for e in spia)
    assert all(e["rankable"] == (e.get("degenerate") is None) for e in spia)  # baselines apart, every tool ranked
    assert all(e["records"] == e["task_records"] == 5 for e in spia)
    assert data["spia_paper_reported"]["rows"][0]["method"] == "Longformer"
    report = json.loads((repo / "leaderboards" / "rejudge.json").read_text("utf-8"))
    judged = {(e["name"], e["task"]) for e in report["entries"] if e.get("agreement")}
    assert {(e["name"], TASK) for e in spia} <= judged  # every seeded SPIA entry was re-asked
    page = (repo / "leaderboards" / "index.html").read_text("utf-8")
    assert "SPIA: reported in the paper, not reproduced here" in page


def test_a_change_to_the_spia_scorer_or_its_re_ask_re_asks_every_entry_in_pull_request_mode():
    from privasis_bench.leaderboard.changed import judge_inputs

    assert {"privasis_bench/spia/", "privasis_bench/leaderboard/families/", "tasks/"} <= set(judge_inputs())
