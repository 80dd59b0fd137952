"""Each verdict names the judge answers that were cut at their token budget (``cut_answers``)."""

from __future__ import annotations

import json

from judge_fakes import TEMPLATES, parse_prompt

from privasis_bench.adapters.base import ChatResult
from privasis_bench.data.records import Attribute, Record
from privasis_bench.protocol.judge import Judge, JudgeInput, JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.verdicts import KeepVerdict, RecordVerdict, TargetVerdict

PROMPTS = JudgePrompts(texts=dict(TEMPLATES), sources={k: "test" for k in TEMPLATES})


def _record() -> Record:
    return Record(id="r1", record_type="letter", text="Original text about Lena Okafor from Lyon.",
                  base_instruction="- drop", smoothed_instruction="drop", reference_sanitized="",
                  targets=(Attribute("name", "Lena Okafor", "drop"), Attribute("city", "Lyon", "drop"),
                           Attribute("pet", "Rex", "drop")),
                  keep=(Attribute("topic", "gardening", "keep"), Attribute("tone", "warm", "keep")),
                  category="Health")


def _runner(cut_tags: set[str], cached_tags: frozenset[str] = frozenset()):
    """A batch runner answering every question; answers to ``cut_tags`` end at the budget (finish_reason length)."""

    def run(requests):
        out = []
        for request in requests:
            tag, fields = parse_prompt(request.messages[0][1])
            text = {"COMPARE": "neither", "INCLUDE": "NO"}.get(tag, "no idea")
            if tag == "GUESS_TARGET" and fields[0] == "city":
                text = "somewhere in lyon"  # an inference leak: this chain stops after the guess
            if tag == "GUESS_TARGET" and fields[1].startswith("Original"):
                tag = "GUESS_ORIGINAL"
            out.append(ChatResult(text=text, finish_reason="length" if tag in cut_tags else "stop",
                                  cached=tag in cached_tags))
        return out

    return run


def _judge(cut_tags: set[str], cached_tags: frozenset[str] = frozenset(), output: str = "A text about Rex.") -> RecordVerdict:
    verdicts, _ = Judge(_runner(cut_tags, cached_tags), PROMPTS, JudgeSettings()).judge([JudgeInput(_record(), output)])
    return verdicts[0]


def test_every_recorded_answer_cut_at_the_budget_is_named_on_its_verdict():
    rv = _judge({"GUESS_TARGET", "GUESS_ORIGINAL", "COMPARE", "GUESS_KEEP", "INCLUDE"})
    name, city, pet = rv.targets
    assert name.tier == "sanitized" and name.cut_answers == ["guess", "original_guess", "compare_answer"]
    assert city.tier == "inference" and city.cut_answers == ["guess"]  # only the answers it records
    assert pet.tier == "direct" and pet.cut_answers == []  # no judge question asked
    assert [k.cut_answers for k in rv.keep] == [["guess", "inclusion_answer"]] * 2


def test_only_the_cut_answers_are_named_and_a_cached_cut_answer_counts_too():
    rv = _judge({"GUESS_ORIGINAL", "INCLUDE"}, cached_tags=frozenset({"GUESS_ORIGINAL"}))
    assert rv.targets[0].cut_answers == ["original_guess"] and rv.targets[1].cut_answers == []
    assert all(k.cut_answers == ["inclusion_answer"] for k in rv.keep)
    assert all(t.cut_answers == [] for t in _judge(set()).targets)


def test_the_flags_reach_the_samples_row_and_survive_a_round_trip():
    rv = _judge({"COMPARE"})
    row = json.loads(json.dumps(rv.to_dict()))
    assert row["targets"][0]["cut_answers"] == ["compare_answer"] and row["keep"][0]["cut_answers"] == []
    assert RecordVerdict.from_dict(row).to_dict() == row


def test_a_verdict_read_from_an_older_row_records_nothing_about_cuts():
    old = {"name": "n", "kind": "drop", "group": None, "value": "v", "tier": "sanitized"}
    target = TargetVerdict.from_dict(old)
    assert target.cut_answers is None and "cut_answers" not in target.to_dict()
    keep = KeepVerdict.from_dict({"name": "k", "value": "v", "via": "verbatim", "retained": True})
    assert keep.cut_answers is None and "cut_answers" not in keep.to_dict()
