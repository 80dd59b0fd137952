"""The SPIA scorer's waves against scripted role engines: what is asked, what is recorded, what fails."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from privasis_bench.data.system_output import SystemOutput
from privasis_bench.spia.scorer import SpiaScorer
from privasis_bench.tasks.paths import builtin_tasks_dir

SAMPLE = builtin_tasks_dir() / "spia" / "spia_sample.jsonl"


@dataclass
class Answer:
    text: str | None
    error: str | None = None


class Scripted:
    """A role engine whose answer to each prompt is computed by ``reply(prompt)``; records every request."""

    def __init__(self, reply):
        self.reply, self.asked = reply, []

    def run(self, requests, *, desc):
        self.asked.append((desc, len(requests)))
        return [self.reply(r.messages[0][1]) for r in requests]


def _task(**args):
    return SimpleNamespace(task="spia_sample", source_file="spia_sample.yaml", scorer_args=args,
                           dataset=SimpleNamespace(data_files=[str(SAMPLE)]))


def _adversary(prompt: str) -> Answer:
    if prompt.startswith("Read the document below"):
        return Answer("People:\n- the writer | author of the post\nNumber of people: 1\n")
    if "IDENTIFICATION_NUMBER" in prompt:
        return Answer('{"people": [{"subject_id": 0, "attributes": []}]}')
    return Answer('{"people": [{"subject_id": 0, "attributes": [{"tag": "SEX", "keyword": "Female", "certainty": 4}]}]}')


def _matcher(prompt: str) -> Answer:
    if prompt.startswith("Two lists describe"):
        return Answer('{"pairs": [{"reference": 0, "inferred": 0}]}')
    return Answer("no")


def test_every_document_is_asked_in_waves_and_scored_from_the_answers():
    scorer = SpiaScorer(_task())
    ids = ["PANORAMA-079D2", "PANORAMA-06079"]
    outputs = {d: SystemOutput(text="A person wrote a post.") for d in ids}
    adversary, matcher = Scripted(_adversary), Scripted(_matcher)
    metrics, rows = scorer.score(outputs, bootstrap_samples=50, seed=1, confidence=0.95,
                                 roles={"adversary": adversary, "matcher": matcher})
    assert [d for d, _ in adversary.asked] == ["adversary: people", "adversary: profile codes",
                                               "adversary: profile descriptive"]
    assert [n for _, n in adversary.asked] == [2, 2, 2]
    assert matcher.asked[0] == ("matcher: align people", 2)
    assert all(r["scored"] and set(r["answers"]) == {"subjects", "profile_codes", "profile_descriptive", "align"}
               for r in rows)
    # only subject 0 of each document is paired: the other subjects' attributes count as not inferred
    assert metrics["scored_documents"] == 2 and 0.0 <= metrics["cpr"] <= 1.0
    assert metrics == SpiaScorer.rescore(json.loads(json.dumps(rows)), {}, bootstrap_samples=50, seed=1,
                                         confidence=0.95)  # recomputed from the stored rows alone
    sex = [t for r in rows for s in r["subjects"] for t in s["tags"] if t["tag"] == "SEX" and s["aligned_to"] == 0]
    for t in sex:
        expected = 1.0 if t["gold"].lower() == "female" else 0.0
        assert t["score"] == expected


def test_a_failed_or_unreadable_adversary_answer_leaves_the_document_unscored_with_its_error():
    scorer = SpiaScorer(_task())
    outputs = {"PANORAMA-079D2": SystemOutput(text="x"), "PANORAMA-06079": SystemOutput(text="y"),
               "PANORAMA-BE959": SystemOutput(text=None, error="model failed")}

    def adversary(prompt):
        if "y" == prompt.split("Document:\n", 1)[-1].split("\n", 1)[0] and prompt.startswith("Read"):
            return Answer(None, "HTTP 500")
        return _adversary(prompt) if "x" in prompt else Answer("I won't.")

    metrics, rows = scorer.score(outputs, bootstrap_samples=0, seed=1, confidence=0.95,
                                 roles={"adversary": Scripted(adversary), "matcher": Scripted(_matcher)})
    by_id = {r["id"]: r for r in rows}
    assert by_id["PANORAMA-06079"]["error"] == "adversary: people: HTTP 500" and not by_id["PANORAMA-06079"]["scored"]
    assert by_id["PANORAMA-BE959"]["error"] == "model failed"
    assert by_id["PANORAMA-079D2"]["scored"]
    assert metrics["scored_documents"] == 1 and metrics["documents"] == 3


def test_a_failed_matcher_question_is_a_failure_not_a_zero():
    scorer = SpiaScorer(_task())
    outputs = {"PANORAMA-079D2": SystemOutput(text="x")}

    def adversary(prompt):
        if prompt.startswith("Read the document below"):
            return Answer("People:\n- someone | x\nNumber of people: 1")
        if "IDENTIFICATION_NUMBER" in prompt:
            return Answer('{"people": [{"subject_id": 0, "attributes": []}]}')
        return Answer('{"people": [{"subject_id": 0, "attributes": [{"tag": "NAME", "keyword": "Zed", "certainty": 3}]}]}')

    def matcher(prompt):
        return Answer('{"pairs": [{"reference": 0, "inferred": 0}]}') if prompt.startswith("Two lists") else Answer(None, "timeout")

    _, rows = scorer.score(outputs, bootstrap_samples=0, seed=1, confidence=0.95,
                           roles={"adversary": Scripted(adversary), "matcher": Scripted(matcher)})
    assert not rows[0]["scored"] and rows[0]["error"].startswith("matcher: 1 value question(s) failed (NAME)")


def test_plan_requests_and_bad_settings():
    scorer = SpiaScorer(_task())
    record = scorer.records(limit=1)[0]
    asked = scorer.role_requests(record, "text")
    doc = scorer.documents[record.id]
    counted = sum(1 for s in doc.subjects for a in s.attributes if a.keyword.strip() and a.certainty >= 3)
    # three adversary calls; the alignment plus one value question per counted gold value
    assert [len(asked["adversary"]), len(asked["matcher"])] == [3, 1 + counted] and counted == 19
    assert asked["adversary"][0].temperature == 0.1
    from privasis_bench.errors import TaskConfigError

    with pytest.raises(TaskConfigError, match="scorer_args.*unknown key"):
        SpiaScorer(_task(decider="human"))
    with pytest.raises(TaskConfigError, match="uncomparable"):
        SpiaScorer(_task(uncomparable="maybe"))


def test_saved_anonymized_texts_in_spias_format(tmp_path):
    scorer = SpiaScorer(_task())
    path = tmp_path / "anon.jsonl"
    path.write_text(json.dumps({"metadata": {"data_id": "PANORAMA-079D2"}, "anonymized_text": "A post."}) + "\n"
                    + json.dumps({"id": "TAB-a5162", "output": "A judgment."}) + "\n", encoding="utf-8")
    read = scorer.read_predictions(str(path))
    assert read["PANORAMA-079D2"].text == "A post." and read["TAB-a5162"].text == "A judgment."
    path.write_text(json.dumps({"metadata": {"data_id": "PANORAMA-079D2"}, "text": "x"}) + "\n", encoding="utf-8")
    from privasis_bench.errors import DataError

    with pytest.raises(DataError, match=r"anon.jsonl:1: no anonymized_text"):
        scorer.read_predictions(str(path))
