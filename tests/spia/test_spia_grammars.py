"""The SPIA answer-grammar option: which requests carry a grammar, that the verifier's re-ask sends the same ones,
that results record the departure, and that a back-end that cannot hold a grammar fails the call (never answers
freely)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.errors import TaskConfigError
from privasis_bench.leaderboard.families.spia import requests_for
from privasis_bench.spia import grammars
from privasis_bench.spia.records import CODE_TAGS, NON_CODE_TAGS
from privasis_bench.spia.scorer import GRAMMAR_DEPARTURE, SpiaScorer
from privasis_bench.tasks.paths import builtin_tasks_dir
from privasis_bench.tasks.registry import load_task

SAMPLE = builtin_tasks_dir() / "spia" / "spia_sample.jsonl"


def _scorer(**args) -> SpiaScorer:
    return SpiaScorer(SimpleNamespace(task="spia_sample", source_file="spia_sample.yaml", scorer_args=args,
                                      dataset=SimpleNamespace(data_files=[str(SAMPLE)])))


def _all_requests(scorer: SpiaScorer) -> list[ChatRequest]:
    doc = next(iter(scorer.documents.values()))
    record = scorer.records(1)[0]
    asked = scorer.role_requests(record, doc.text)
    return asked["adversary"] + asked["matcher"]


def test_free_answers_by_default_and_every_request_constrained_with_gbnf():
    free, held = _scorer(), _scorer(answer_grammar="gbnf")
    assert all(r.grammar is None for r in _all_requests(free))
    assert "answer_grammar" in free.describe() and GRAMMAR_DEPARTURE not in free.describe()["departures"]
    requests = _all_requests(held)
    assert requests and all(r.grammar for r in requests)
    assert held.describe()["answer_grammar"] == "gbnf" and GRAMMAR_DEPARTURE in held.describe()["departures"]
    people, codes, descriptive = requests[:3]
    assert people.grammar == grammars.people_list()
    subjects = len(next(iter(held.documents.values())).subjects)
    assert codes.grammar == grammars.profile(CODE_TAGS, subjects)
    assert descriptive.grammar == grammars.profile(NON_CODE_TAGS, subjects)
    with pytest.raises(TaskConfigError, match="answer_grammar"):
        _scorer(answer_grammar="json")


def test_the_shipped_sample_task_holds_its_answers_to_the_grammar():
    assert SpiaScorer(load_task("spia_sample")).constrained


def test_the_reask_sends_the_same_requests_as_the_run():
    scorer = _scorer(answer_grammar="gbnf")
    doc = next(iter(scorer.documents.values()))
    make = requests_for(scorer)
    inferred = [("someone", [])]
    assert make["subjects"]("a text") == scorer.subjects_request("a text")
    assert make["profile"]("profile_codes", "a text", ["a", "b"]).grammar == grammars.profile(CODE_TAGS, 2)
    assert make["align"](doc, inferred) == scorer.align_request(doc, inferred)
    assert make["align"](doc, inferred).grammar == grammars.alignment(len(doc.subjects), 1)
    assert make["match"]("Paris", "France", "LOCATION").grammar == grammars.verdict()


def test_the_grammars_bound_what_the_readers_refuse():
    people = grammars.people_list()
    assert f'line{{{grammars.MAX_PEOPLE}}} "Number of people: {grammars.MAX_PEOPLE}"' in people
    assert f"line{{{grammars.MAX_PEOPLE + 1}}}" not in people  # the count always equals the lines listed
    profile = grammars.profile(("AGE", "SEX"), 3)
    assert re.findall(r'subject_id\\": (\d+)', profile) == ["0", "1", "2"]  # every listed person, in order
    assert 'tag ::= ("AGE" | "SEX")' in profile and "[0-5]" in profile  # asked tags only, certainty 0-5
    assert grammars.profile(("AGE",), 0).startswith('root ::= "{\\"people\\": []}"\n')
    assert 'target ::= ("0" | "1" | "null")' in grammars.alignment(2, 2)
    assert grammars.verdict() == 'root ::= ("yes" | "less precise" | "no")\n'


def test_a_grammar_changes_the_cache_key_and_leaves_old_keys_alone():
    plain = ChatRequest.user("q", max_tokens=8)
    held = ChatRequest.user("q", max_tokens=8, grammar='root ::= "yes"')
    assert "grammar" not in plain.generation_settings() and held.generation_settings()["grammar"] == 'root ::= "yes"'
    assert plain.cache_key("m") != held.cache_key("m")


class _Free(Adapter):
    provider = "free"

    def __init__(self) -> None:
        super().__init__("m")
        self.calls = 0

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        self.calls += 1
        return ChatResult(text="anything")


def test_a_backend_that_cannot_hold_a_grammar_fails_the_call_without_asking():
    adapter = _Free()
    engine = Engine(adapter, ModelSpec.parse("free:m"), role="adversary", cache=None, progress=False,
                    retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01, jitter=0.0))
    held, plain = engine.run([ChatRequest.user("q", max_tokens=8, grammar='root ::= "yes"'),
                              ChatRequest.user("q", max_tokens=8)], desc="t")
    assert held.text is None and "cannot hold an answer to a grammar" in held.error
    assert plain.text == "anything" and adapter.calls == 1
