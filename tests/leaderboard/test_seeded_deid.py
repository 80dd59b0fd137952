"""Issue 44: the de-identification tools' seeded entries on the Privasis sample board (leaderboards/seed_board.sh,
TASKS=privasis_sample): verified like every entry, judged by the task's pinned judge, each in the committed re-judge
report with a passing agreement, and described on the board in one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.adapters.registry import board_descriptions
from privasis_bench.leaderboard.rejudge import sample_size
from privasis_bench.leaderboard.rejudge_report import read_report
from privasis_bench.leaderboard.task_source import shipped_task

REPO = Path(__file__).resolve().parents[2]
TASK = "privasis_sample"
#: entry name -> the provider and backend settings its run must record (what the seed script ran)
SEEDED = {
    "microsoft/presidio-patterns": ("presidio", {"nlp": "none"}),
    "microsoft/presidio-mask": ("presidio", {"operator": "mask"}),
    "microsoft/presidio-synthetic": ("presidio", {"operator": "synthetic"}),
    "scrubadub/scrubadub": ("scrubadub", {}),
    "spacy/ner-masker": ("spacy-ner", {}),
    "datafog/datafog-regex": ("datafog", {}),
}

pytestmark = pytest.mark.skipif(not (REPO / "submissions").is_dir(), reason="not a source checkout")


def _folder(name: str) -> Path:
    return REPO / "submissions" / name.replace("/", "__") / TASK


@pytest.fixture(scope="module")
def outcomes(committed_verdicts):
    folders = {_folder(n).resolve() for n in SEEDED}
    found = {v.submission["name"]: v for v in committed_verdicts if v.path.resolve() in folders}
    assert len(found) == len(SEEDED), f"seeded entries missing from submissions/: {sorted(set(SEEDED) - set(found))}"
    return found


def test_each_tool_has_a_verified_privasis_entry_judged_by_the_pinned_judge(outcomes):
    assert set(outcomes) == set(SEEDED)
    pinned = shipped_task(TASK).judge.model
    for name, (provider, settings) in SEEDED.items():
        v = outcomes[name]
        assert v.ok, (name, v.problems)
        sub = v.submission
        assert sub["track"] == "verified" and sub["reference"] is False and sub["model"]["rankable"] is True
        assert sub["judge"]["key"] == pinned and v.results["judge"]["mode"] == "model"
        assert sub["model"]["spec"]["provider"] == provider
        backend = sub["model"]["backend"]
        assert backend.get("version"), name  # the tool's version is recorded: the entry says what ran
        for key, value in settings.items():
            assert backend.get(key) == value, (name, key, backend.get(key))
        assert v.facts()["partial"] is True and v.facts()["scored_records"] == sub["dataset"]["records"] == 5


def test_each_entry_is_in_the_committed_rejudge_report_with_a_passing_agreement():
    report = read_report(REPO / "leaderboards" / "rejudge.json")  # the strict reader: counts consistent, passed
    for name in SEEDED:
        entry = report.find(name, TASK)
        assert entry is not None and entry.agreement is not None, name
        agreement = entry.agreement
        assert agreement.judge == shipped_task(TASK).judge.model and agreement.sample_size == sample_size()
        assert agreement.agreement().passed and agreement.asked == min(agreement.pool, agreement.sample_size), name


def test_the_committed_board_ranks_them_with_one_sentence_each():
    board = json.loads((REPO / "leaderboards" / "privasis.json").read_text(encoding="utf-8"))
    rows = {r["name"]: r for r in board["entries"] if r.get("task") == TASK}
    sentences = board_descriptions()
    for name, (provider, _) in SEEDED.items():
        row = rows[name]
        assert row["about"] == sentences[provider] and row["rankable"] is True and not row.get("degenerate")
        # ranked, or (every entry of the group ties on the headline) unranked with the reason said
        assert isinstance(row["rank"], int) or (row["rank"] is None and "no order" in row["no_order"])
        assert row["rejudge_agreement"]["passed"] is True
