"""The empty-output and inclusion-text rules (issue 35.1-2), against a scripted deterministic judge."""

from __future__ import annotations

import pytest
from judge_fakes import TEMPLATES, ScriptedRunner, deterministic_answer, parse_prompt

from privasis_bench.data.records import Attribute, Record
from privasis_bench.errors import PrivasisError
from privasis_bench.protocol.judge import Judge, JudgeInput, JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.judging import JudgeChoice, resolve_judge
from privasis_bench.protocol.rederive import empty_output_rule, rederive_row
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.tasks.registry import load_task

PROMPTS = JudgePrompts(texts=dict(TEMPLATES), sources={k: "test" for k in TEMPLATES})
REC = Record(id="r1", record_type="letter", text="Lena Okafor, 41, nurse in Lyon.", base_instruction="- drop",
             smoothed_instruction="drop", reference_sanitized="",
             targets=(Attribute("full_name", "Lena Okafor", "drop"), Attribute("city", "Lyon", "abstract")),
             keep=(Attribute("job", "nurse", "keep"),), category="Health")


def answer(tag, fields):
    """Deterministic, and leaky about empty texts: an empty text gets "response 1" and "YES" (as a small judge may)."""
    if tag == "COMPARE":
        return "Response 1"
    if tag == "INCLUDE":
        return "YES"
    return deterministic_answer(tag, fields)


def judge(output, failed=False, **rules):
    runner = ScriptedRunner(answer)
    verdicts, _ = Judge(runner, PROMPTS, JudgeSettings(**rules)).judge([JudgeInput(REC, output, output_failed=failed)])
    return verdicts[0], runner


@pytest.mark.parametrize("output", ["", "  \n\t "])
def test_empty_output_skip_rule_asks_nothing_and_scores_nothing_leaked_nothing_retained(output):
    verdict, runner = judge(output)  # the harness default
    assert runner.prompts == []
    assert [t.tier for t in verdict.targets] == ["sanitized", "sanitized"]
    assert [(k.via, k.retained) for k in verdict.keep] == [("empty_output", False)]


@pytest.mark.parametrize("output", ["", "  \n\t "])
def test_empty_output_judge_rule_shows_the_text_to_the_judge_like_any_other(output):
    verdict, runner = judge(output, empty_outputs="judge")
    # every question of both chains is asked, with the empty text in it (the official evaluator does the same)
    assert sorted(runner.tags()) == sorted(["GUESS_TARGET", "GUESS_TARGET", "COMPARE", "GUESS_ABSTRACT",
                                            "GUESS_ABSTRACT", "COMPARE", "GUESS_KEEP", "INCLUDE"])
    asked_about_output = [parse_prompt(p)[1] for p in runner.prompts if parse_prompt(p)[0].startswith("GUESS")
                          and parse_prompt(p)[1][1] != REC.text]
    assert asked_about_output and all(fields[1] == output for fields in asked_about_output)
    # the answers decide, read the official way: "Response 1" is a proximity leak, "YES" is retained
    assert [t.tier for t in verdict.targets] == ["proximity", "proximity"]
    assert [(k.via, k.retained) for k in verdict.keep] == [("judge", True)]


@pytest.mark.parametrize("output", [None])
def test_a_failed_output_is_never_shown_to_the_judge(output):
    verdict, runner = judge(output, failed=True, empty_outputs="judge")
    assert runner.prompts == []
    assert verdict.output_failed and [t.tier for t in verdict.targets] == ["sanitized", "sanitized"]


def _inclusion_text(output, rule):
    _, runner = judge(output, inclusion_text=rule)
    (prompt,) = [p for p in runner.prompts if parse_prompt(p)[0] == "INCLUDE"]
    return parse_prompt(prompt)[1][0]


def test_inclusion_text_rules():
    output = "I think about it.</think>A care worker wrote this.</think>trailing"
    assert _inclusion_text(output, "raw") == output  # the official evaluator: the raw text
    assert _inclusion_text(output, "after-think") == "A care worker wrote this."  # the harness default
    # the guessing questions are cut either way
    _, runner = judge(output, inclusion_text="raw")
    guesses = [parse_prompt(p)[1][1] for p in runner.prompts if parse_prompt(p)[0] == "GUESS_KEEP"]
    assert guesses == ["A care worker wrote this."]


def test_rederive_follows_the_recorded_empty_output_rule():
    verdict, _ = judge("", empty_outputs="judge")
    row = {**verdict.to_dict(), "output": "", "output_failed": False, "status": verdict.status}
    assert rederive_row(row, parse_mode="official", judge_enabled=True, empty_outputs="judge") == []
    # the same row read under the skip rule contradicts it: the verdicts came from the judge's answers
    assert rederive_row(row, parse_mode="official", judge_enabled=True, empty_outputs="skip")
    skipped, _ = judge("")
    row = {**skipped.to_dict(), "output": "", "output_failed": False, "status": skipped.status}
    assert rederive_row(row, parse_mode="official", judge_enabled=True) == []
    assert rederive_row(row, parse_mode="official", judge_enabled=True, empty_outputs="judge")
    assert empty_output_rule({"judge": {"empty_outputs": "judge"}}) == "judge"
    assert empty_output_rule({"judge": {}}) == "skip"  # results from before the option: the rule they were made with


def test_rules_are_recorded_and_only_non_default_rules_enter_the_checkpoint_fingerprint():
    task = load_task("privasis_sample")
    default = resolve_judge(task, "fakejudge:x")
    official = resolve_judge(task, "fakejudge:x", empty_outputs="judge", inclusion_text="raw")
    assert default.describe()["empty_outputs"] == "skip" and default.describe()["inclusion_text"] == "after-think"
    assert official.describe()["empty_outputs"] == "judge" and official.describe()["inclusion_text"] == "raw"
    assert default.fingerprint() != official.fingerprint()
    # a checkpoint written before the rules were options (settings without them) still matches the default
    legacy = {k: v for k, v in default.settings.__dict__.items() if k not in ("empty_outputs", "inclusion_text")}
    from privasis_bench.protocol.checkpoint import fingerprint
    from privasis_bench.protocol.judging import ANSWER_READING_VERSION

    assert default.fingerprint() == fingerprint({"judge": default.spec.cache_identity(), "answer_reading":
                                                 ANSWER_READING_VERSION, "prompts": default.prompts.hashes,
                                                 "settings": legacy})
    assert isinstance(default, JudgeChoice)


@pytest.mark.parametrize("kw, option", [({"empty_outputs": "ask"}, "--empty-outputs"),
                                        ({"inclusion_text": "cut"}, "--inclusion-text")])
def test_an_unknown_rule_is_one_line_naming_the_option(kw, option):
    with pytest.raises(PrivasisError, match=option):
        resolve_judge(load_task("privasis_sample"), "none", **kw)


def test_verdict_round_trip_keeps_the_judged_empty_output():
    verdict, _ = judge("", empty_outputs="judge")
    assert RecordVerdict.from_dict(verdict.to_dict()).keep[0].via == "judge"
