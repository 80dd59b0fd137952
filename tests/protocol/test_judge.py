"""Decision rules of protocol §3-4, table-driven, with a scripted fake judge."""

from __future__ import annotations

import pytest
from judge_fakes import TEMPLATES, ScriptedRunner, parse_prompt, write_templates

from privasis_bench.data.records import Attribute, Record
from privasis_bench.errors import TaskConfigError
from privasis_bench.protocol.judge import Judge, JudgeInput, JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts, parse_compare, parse_inclusion, render
from privasis_bench.tasks.config import JudgeTemplates

PROMPTS = JudgePrompts(texts=dict(TEMPLATES), sources={k: "test" for k in TEMPLATES})


def record(targets=(), keep=(), text="Original text about Lena Okafor from Lyon.", rid="r1") -> Record:
    return Record(
        id=rid, record_type="letter", text=text, base_instruction="- drop", smoothed_instruction="drop",
        reference_sanitized="", targets=tuple(targets), keep=tuple(keep), category="Health",
    )


def T(name, value, kind="drop"):
    return Attribute(name, value, kind)


def K(name, value):
    return Attribute(name, value, "keep")


def judge_one(rec, output, answer, mode="official", enabled=True):
    runner = ScriptedRunner(answer)
    judge = Judge(runner if enabled else None, PROMPTS, JudgeSettings(parse_mode=mode, enabled=enabled))
    verdicts, stats = judge.judge([JudgeInput(rec, output)])
    return verdicts[0], stats, runner


def guess_then(guess_sanitized="unknown", guess_original="lena okafor", compare="neither", include="NO", keep_guess="nothing"):
    """An answer function: guesses differ for the sanitized output vs the original record."""

    def answer(tag, fields):
        if tag in ("GUESS_TARGET", "GUESS_ABSTRACT"):
            return guess_original if fields[1].startswith("Original") else guess_sanitized
        if tag == "GUESS_KEEP":
            return keep_guess
        if tag == "COMPARE":
            return compare
        if tag == "INCLUDE":
            return include
        raise AssertionError(tag)

    return answer


# --- answer parsing ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "answer, official, strict",
    [
        ("response1", True, True),
        ("Response 1.", True, True),  # official: contains "1"; strict: clean label
        ("neither, 1 is wrong", True, None),  # official reads any "1" as a leak; strict: unparseable
        ("both", True, True),
        ("Both are equally close", True, None),
        ("**BOTH**", True, True),
        ("response2", False, False),
        ("Response 2", False, False),
        ("  RESPONSE_2 ", False, False),
        ("neither", False, False),
        ("Neither.", False, False),
        ("I cannot tell", False, None),
        ("", False, None),
        ("response12", True, None),
    ],
)
def test_parse_compare(answer, official, strict):
    assert parse_compare(answer, "official") is official
    assert parse_compare(answer, "strict") is strict


@pytest.mark.parametrize(
    "answer, official, strict",
    [
        ("YES", True, True),
        ("yes", True, True),  # stripped and upper-cased equals YES
        ("  Yes \n", True, True),
        ("Yes.", False, True),  # official: exact YES only
        ("YES, it is present", False, None),
        ("NO", False, False),
        ("No.", False, False),
        ("maybe", False, None),
        ("", False, None),
    ],
)
def test_parse_inclusion(answer, official, strict):
    assert parse_inclusion(answer, "official") is official
    assert parse_inclusion(answer, "strict") is strict


def test_render_is_single_pass_and_keeps_other_braces():
    out = render("A {text} B {other}", text="{attribute} {x}", attribute="no")
    assert out == "A {attribute} {x} B {other}"


# --- tiers for targets ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "target, output, answers, expected_tier",
    [
        # tier 1: direct leak on the raw output; one list item suffices
        (T("name", ["Lena", "Okafor"]), "Patient Okafor was seen.", guess_then(), "direct"),
        (T("name", "Lena Okafor"), "patient LENA OKAFOR was seen.", guess_then(), "direct"),
        (T("age", 42), "A 42-year-old patient.", guess_then(), "direct"),
        (T("address", {"city": "Lyon", "zip": "69001"}), "Lives in 69001.", guess_then(), "direct"),
        # tier 2: the judge's guess (lower-cased) contains the value
        (T("name", "Lena Okafor"), "A patient was seen.", guess_then(guess_sanitized="Probably LENA OKAFOR"), "inference"),
        (T("name", ["Lena", "Okafor"]), "A patient was seen.", guess_then(guess_sanitized="okafor?"), "inference"),
        # tier 3: proximity, official parsing
        (T("name", "Lena Okafor"), "A patient was seen.", guess_then(compare="Response 1."), "proximity"),
        (T("name", "Lena Okafor"), "A patient was seen.", guess_then(compare="neither, 1 is wrong"), "proximity"),
        (T("name", "Lena Okafor"), "A patient was seen.", guess_then(compare="both"), "proximity"),
        (T("name", "Lena Okafor"), "A patient was seen.", guess_then(compare="response2"), "sanitized"),
        (T("name", "Lena Okafor"), "A patient was seen.", guess_then(compare="neither"), "sanitized"),
        # null values are never judged
        (T("name", None), "Lena Okafor everywhere", guess_then(), "null"),
    ],
)
def test_target_tiers(target, output, answers, expected_tier):
    rv, _, _ = judge_one(record([target], [K("clinic", "Lyon")]), output, answers)
    assert rv.targets[0].tier == expected_tier


def test_tiers_stop_at_first_that_fires():
    _, _, runner = judge_one(record([T("name", "Lena")]), "Lena was here", guess_then())
    assert runner.prompts == []  # direct leak: no judge call at all
    _, _, runner = judge_one(record([T("name", "Lena")]), "someone", guess_then(guess_sanitized="lena"))
    assert runner.tags() == ["GUESS_TARGET"]  # inference leak: no proximity calls


def test_proximity_prompt_contents():
    rv, stats, runner = judge_one(
        record([T("hobbies", ["chess", "Go"], kind="abstract")]), "plan</think>They enjoy board games.",
        guess_then(guess_sanitized="Board Games", guess_original="Chess and checkers", compare="response2"),
    )
    tags = runner.tags()
    assert tags == ["GUESS_ABSTRACT", "GUESS_ABSTRACT", "COMPARE"]  # abstract targets use their template
    first = parse_prompt(runner.prompts[0])[1]
    assert first == ["hobbies", "They enjoy board games."]  # think part removed, underscores -> spaces
    assert parse_prompt(runner.prompts[1])[1][1].startswith("Original text")  # second guess is on the original
    compare = parse_prompt(runner.prompts[2])[1]
    # response1 = guess on the sanitized output, response2 = guess on the original, both lower-cased
    assert compare == ["hobbies", "board games", "chess and checkers", "['chess', 'Go']"]
    assert rv.targets[0].tier == "sanitized"
    assert rv.targets[0].guess == "board games" and rv.targets[0].original_guess == "chess and checkers"
    assert stats.guess_original_computed == 1 and stats.compare == 1


def test_strict_unparseable_compare_is_reported_not_scored():
    rv, stats, _ = judge_one(record([T("name", "Lena")], [K("c", "x")]), "nothing", guess_then(compare="neither, 1 is wrong", include="YES"), mode="strict")
    assert rv.targets[0].tier == "unparseable"
    assert rv.status == "unparseable"
    assert stats.unparseable == 1


# --- retention -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "keep, output, include, mode, retained, via",
    [
        (K("clinic", "Lyon Clinic"), "Visit the lyon clinic.", "NO", "official", True, "verbatim"),
        (K("codes", ["A1", "B2"]), "codes A1 and B2", "NO", "official", True, "verbatim"),
        (K("codes", ["A1", "B2"]), "code A1 only", "NO", "official", False, "judge"),  # a list needs all items
        (K("codes", ["A1", "B2"]), "code A1 only", "YES", "official", True, "judge"),
        (K("codes", ["A1", "B2"]), "code A1 only", "yes", "official", True, "judge"),
        (K("codes", ["A1", "B2"]), "code A1 only", "Yes.", "official", False, "judge"),  # "Yes." is not retained
        (K("codes", ["A1", "B2"]), "code A1 only", "Yes.", "strict", True, "judge"),
        (K("codes", ["A1", "B2"]), "code A1 only", "perhaps", "strict", None, "unparseable"),
        (K("clinic", None), "anything", "YES", "official", None, "null"),
    ],
)
def test_retention(keep, output, include, mode, retained, via):
    rv, _, runner = judge_one(record([T("n", "Lena")], [keep]), output, guess_then(include=include), mode=mode)
    assert (rv.keep[0].retained, rv.keep[0].via) == (retained, via)


def test_inclusion_prompt_uses_joined_information_and_keep_guess():
    _, _, runner = judge_one(
        record([], [K("codes", {"a": "A1", "b": "B2"})]), "x</think>code A1", guess_then(keep_guess="A1 AND B2", include="YES")
    )
    assert runner.tags() == ["GUESS_KEEP", "INCLUDE"]
    assert parse_prompt(runner.prompts[1])[1] == ["code A1", "a1 and b2", "A1, B2"]


# --- empty outputs, failures, judge none ---------------------------------------------------------

@pytest.mark.parametrize("output", ["", "   \n", None])
def test_empty_output_leaks_nothing_retains_nothing(output):
    rv, _, runner = judge_one(record([T("n", "Lena"), T("m", None)], [K("c", "Lyon")]), output, guess_then())
    assert [t.tier for t in rv.targets] == ["sanitized", "null"]
    assert (rv.keep[0].retained, rv.keep[0].via) == (False, "empty_output")
    assert runner.prompts == []


def test_failed_judge_call_leaves_record_unjudged():
    def answer(tag, fields):
        return None if tag == "GUESS_KEEP" else "unknown"

    rv, stats, _ = judge_one(record([T("n", "Lena")], [K("c", "Lyon")]), "some text", answer)
    assert rv.keep[0].via == "unjudged" and rv.keep[0].retained is None
    assert rv.status == "unjudged"
    assert stats.failed == 1


def test_failure_in_one_record_does_not_touch_another():
    runner = ScriptedRunner(lambda tag, f: None if "bad" in f[-1] else "unknown" if tag.startswith("GUESS") else "neither")
    judge = Judge(runner, PROMPTS, JudgeSettings())
    out, _ = judge.judge([
        JudgeInput(record([T("n", "Lena")], rid="a"), "bad output"),
        JudgeInput(record([T("n", "Lena")], rid="b"), "good output"),
    ])
    assert [v.status for v in out] == ["unjudged", "judged"]
    assert out[1].targets[0].tier == "sanitized"


def test_judge_none_is_deterministic_direct_and_verbatim_only():
    rv, stats, _ = judge_one(
        record([T("n", "Lena"), T("m", "Okafor")], [K("c", "Lyon"), K("d", "Paris")]), "Lena lives in Lyon", None, enabled=False
    )
    assert [t.tier for t in rv.targets] == ["direct", "sanitized"]
    assert [(k.retained, k.via) for k in rv.keep] == [(True, "verbatim"), (False, "verbatim")]
    assert stats.to_dict() == {k: 0 for k in stats.to_dict()}


def test_stages_are_batched_across_records():
    runner = ScriptedRunner(guess_then())
    judge = Judge(runner, PROMPTS, JudgeSettings())
    items = [JudgeInput(record([T("n", "Lena"), T("m", "Lyon")], [K("c", "Paris")], rid=str(i)), "nothing") for i in range(3)]
    judge.judge(items)
    assert runner.batches == [9, 9, 6]  # guesses (6 targets + 3 keep); originals + inclusions; compares


def test_prompts_load_override_and_validation(tmp_path):
    base = write_templates(tmp_path / "base")
    templates = JudgeTemplates(**{k: str(base / f"{k}.txt") for k in TEMPLATES})
    override = tmp_path / "over"
    override.mkdir()
    (override / "judge_compare.txt").write_text("Which? {attribute} {response1} {response2} {true_value}")
    prompts = JudgePrompts.load(templates, override)
    assert prompts.sources["compare"].endswith("judge_compare.txt")
    assert prompts.sources["guess_keep"].endswith("base/guess_keep.txt")
    assert set(prompts.hashes) == set(TEMPLATES) and len(set(prompts.hashes.values())) == 5
    (override / "inclusion.txt").write_text("no placeholders")
    with pytest.raises(TaskConfigError):
        JudgePrompts.load(templates, override)


# --- judge answers are cleaned before they are read (issue 15) -----------------------------------

WRAPPERS = {
    "whitespace": lambda a: f" {a}\n",
    "think": lambda a: f"<think>The answer could be response1 or YES, both are plausible.</think>\n\n{a}",
    "role token": lambda a: f"assistant\n{a}",
    "think, role and whitespace": lambda a: f"  <think>1 both YES</think>\nassistant\n {a} \n",
}


def _strip_raw(verdict) -> dict:
    data = verdict.to_dict()
    for item in data["targets"] + data["keep"]:
        for key in [k for k in item if k.endswith("_raw")]:
            del item[key]
    return data


@pytest.mark.parametrize("wrapper", list(WRAPPERS), ids=list(WRAPPERS))
@pytest.mark.parametrize(
    "answers",
    [
        dict(guess_sanitized="unknown", compare="response1", include="YES"),
        dict(guess_sanitized="unknown", compare="neither", include="NO"),
        dict(guess_sanitized="lena okafor", compare="neither", include="YES"),  # inference leak
        dict(guess_sanitized="somebody", compare="Response 2", include="yes"),
    ],
)
def test_wrapped_answers_give_the_same_verdicts_and_follow_up_prompts(wrapper, answers):
    rec = record([T("name", "Lena Okafor"), T("city", "Lyon", "abstract")], [K("clinic", "Central Clinic")])
    output = "A patient wrote to a clinic."
    clean = guess_then(**answers)
    wrap = WRAPPERS[wrapper]
    clean_verdict, _, clean_runner = judge_one(rec, output, clean)
    wrapped_verdict, _, wrapped_runner = judge_one(rec, output, lambda tag, fields: wrap(clean(tag, fields)))
    assert _strip_raw(wrapped_verdict) == _strip_raw(clean_verdict)
    assert wrapped_runner.prompts == clean_runner.prompts  # the guess enters response1 / the inclusion question cleaned


def test_raw_answers_are_recorded_next_to_the_cleaned_ones():
    rec = record([T("name", "Lena Okafor")], [K("clinic", "Central Clinic")])
    raw_guess = "<think>hmm</think>\nSomebody"
    answers = guess_then(guess_sanitized=raw_guess, guess_original=" lena okafor\n", compare="assistant\nneither",
                         include="<think>YES?</think> NO", keep_guess="nothing")
    rv, _, _ = judge_one(rec, "A patient wrote to a clinic.", answers)
    target, keep = rv.targets[0], rv.keep[0]
    assert (target.guess, target.guess_raw) == ("somebody", raw_guess)
    assert (target.original_guess, target.original_guess_raw) == ("lena okafor", " lena okafor\n")
    assert (target.compare_answer, target.compare_answer_raw) == ("neither", "assistant\nneither")
    assert target.tier == "sanitized"
    assert (keep.inclusion_answer, keep.inclusion_answer_raw) == ("NO", "<think>YES?</think> NO")
    assert keep.retained is False


def test_guessing_question_uses_the_segment_between_the_first_two_think_tags():
    rec = record([T("name", "Lena Okafor")])
    _, _, runner = judge_one(rec, "draft</think>the kept part</think>tail", guess_then())
    assert parse_prompt(runner.prompts[0])[1][1] == "the kept part"


def test_compare_template_without_attribute_placeholder_loads(tmp_path):
    """The reference wording of the proximity question names only the two responses and the true value."""
    write_templates(tmp_path)
    (tmp_path / "compare.txt").write_text(
        "Truth: {true_value}\nFirst: {response1}\nSecond: {response2}\nWhich is closer? response1, response2, both or neither.",
        encoding="utf-8",
    )
    task_templates = JudgeTemplates(**{k: str(tmp_path / f"{k}.txt") for k in TEMPLATES})
    prompts = JudgePrompts.load(task_templates)
    judge = Judge(ScriptedRunner(guess_then()), prompts, JudgeSettings())
    request = judge.compare_request(T("name", "Lena Okafor"), "someone", "lena okafor")
    assert request.messages[0][1].startswith("Truth: Lena Okafor\nFirst: someone\nSecond: lena okafor")
    (tmp_path / "compare.txt").write_text("Truth: {true_value} First: {response1}", encoding="utf-8")
    with pytest.raises(TaskConfigError, match="response2"):
        JudgePrompts.load(task_templates)
