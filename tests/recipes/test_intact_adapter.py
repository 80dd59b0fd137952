"""``intact:<spec>`` through a real engine, around a scripted (deterministic) base model and attacker."""

from __future__ import annotations

import re

import pytest

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.registry import load_adapter_class
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.records import Attribute, Record
from privasis_bench.engine.executor import Engine
from privasis_bench.errors import ModelSpecError
from privasis_bench.recipes import decomp_adapter, intact_adapter

SPANS = {"name": "Ana Lima", "city": "Porto", "date": "12 May 2023"}
CANDIDATES = {
    # the most specific candidate is traced back, the next is safe, the last (safer still) must not be needed
    "Porto": ["a coastal city in northern Portugal", "a city in Portugal", "a place in Europe"],
    # repeats the original, then two levels the attack recovers: only the generic level is left
    "12 May 2023": ["Friday 12 May 2023", "May 2023", "2023"],
}
GUESSES = {
    "a coastal city in northern Portugal": "1. Porto\n2. Braga\n3. Aveiro",
    "a city in Portugal": "1. Lisbon\n2. Coimbra\n3. Faro",
    "a place in Europe": "1. Paris\n2. Rome\n3. Berlin",
    "May 2023": "1. 1 May 2023\n2. 12 may 2023",
    "2023": "- on 12 May 2023",
}


class Scripted(Adapter):
    """Answers each step of the intact recipe from the tables above; fails on request."""

    provider = "scripted"
    seen: list[str] = []

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        prompt = request.messages[0][1]
        Scripted.seen.append(prompt)
        if "List each separate piece" in prompt:
            text = "DROP: the patient's name\nABSTRACT: the city she lives in\nABSTRACT: the visit date"
        elif prompt.startswith("Find every"):
            info = prompt.split("Information: ", 1)[1].split("\n", 1)[0]
            passage = prompt.split("Passage:\n", 1)[1]
            key = "name" if "name" in info else "city" if "city" in info else "date"
            text = f"- {SPANS[key]}" if SPANS[key] in passage else "NONE"
        elif m := re.search(r"Write (\d+) replacements", prompt):
            span = prompt.split("Phrase: ", 1)[1].split("\n", 1)[0]
            text = "\n".join(f"{i}. {c}" for i, c in enumerate(CANDIDATES[span][: int(m.group(1))], 1))
        elif prompt.startswith("In the document below"):
            candidate = re.search(r'now reads "(.*?)"', prompt).group(1)
            if "FAIL" in prompt:
                raise AdapterError("attacker is down", retryable=False)
            text = GUESSES[candidate]
        else:
            raise AssertionError(f"unexpected prompt: {prompt[:80]}")
        return ChatResult(text=text, usage=Usage(10, 2))


def _record(text: str) -> Record:
    return Record(id="r", record_type="note", text=text, base_instruction="- Drop the name.\n- Generalize the city and date.",
                  smoothed_instruction="Hide her name, blur where she lives and when she came.",
                  reference_sanitized="GOLD OUTPUT", targets=(Attribute("name", "Ana Lima", "drop"),),
                  keep=(Attribute("reason", "physiotherapy", "keep"),))


def _attacks(candidate: str) -> list[str]:
    return [p for p in Scripted.seen if p.startswith("In the document below") and f'now reads "{candidate}"' in p]


@pytest.fixture()
def adapter(monkeypatch):
    monkeypatch.setattr(decomp_adapter, "build_adapter", lambda spec: Scripted(spec.model))
    Scripted.seen.clear()
    a = intact_adapter.IntactAdapter("scripted:base", n_ctx=512)
    yield a
    a.inner.close()


TEXT = "Ana Lima came in on 12 May 2023.\n\nShe lives in Porto and asked about physiotherapy."


def test_registered_rankable_and_wraps_the_base_spec(adapter):
    assert load_adapter_class("intact") is intact_adapter.IntactAdapter and intact_adapter.IntactAdapter.rankable
    assert adapter.base_spec.key() == 'scripted:base,{"n_ctx": 512}' and adapter.attacker is adapter.inner
    assert (adapter.levels, adapter.guesses, adapter.max_spans) == (4, 3, 3)


def test_keeps_the_most_specific_safe_level_and_removes_drop_targets(adapter):
    request = ChatRequest.user(f"Hide her name, blur where she lives and when she came.\n\nText:\n{TEXT}\n",
                               max_tokens=64, record=_record(TEXT))
    with Engine(adapter, ModelSpec.parse("intact:scripted:base"), role="model", cache=None, progress=False) as engine:
        (result,) = engine.run([request], desc="t")
    assert result.ok, result.error
    assert result.text == "came in on [redacted].\n\nShe lives in a city in Portugal and asked about physiotherapy."
    # level 1 of the city was traced back to "Porto" and rejected; level 2 survived; level 3 was never tried
    assert len(_attacks("a coastal city in northern Portugal")) == 1 and len(_attacks("a city in Portugal")) == 1
    assert not _attacks("a place in Europe")
    # the date: a candidate repeating the original is rejected unasked, the others are recovered -> generic level
    assert not _attacks("Friday 12 May 2023") and len(_attacks("May 2023")) == 1 and len(_attacks("2023")) == 1
    # attacks see the whole edited document: drop spans removed, the other span at its current level
    (first,) = _attacks("a coastal city in northern Portugal")
    assert "Ana Lima" not in first and "May 2023" in first and "physiotherapy" in first
    # usage is every sub-call's usage, summed
    assert result.usage.prompt_tokens == 10 * len(Scripted.seen) and result.usage.completion_tokens == 2 * len(Scripted.seen)
    assert any("Hide her name, blur where she lives" in p for p in Scripted.seen)  # read the prompt's instruction
    assert not any("GOLD OUTPUT" in p or "physiotherapy'" in p for p in Scripted.seen)  # reads no gold labels


def test_a_failed_sub_call_fails_that_record_only(adapter):
    good, bad = _record(TEXT), _record(TEXT.replace("physiotherapy", "FAIL physiotherapy"))
    requests = [ChatRequest.user(f"- Drop the name.\n- Generalize the city and date.\n{r.text}", max_tokens=64, record=r)
                for r in (good, bad)]
    results = adapter.generate_batch(requests)
    assert results[0].ok and "a city in Portugal" in results[0].text
    assert results[1].text is None and results[1].error.startswith("intact step attack level 1: model call failed")
    assert results[1].usage.prompt_tokens > 0  # the calls it did make are still counted


def test_a_separate_attacker_answers_the_attacks(monkeypatch):
    built = []

    def build(spec):
        built.append(spec.key())
        return Scripted(spec.model)

    monkeypatch.setattr(decomp_adapter, "build_adapter", build)
    Scripted.seen.clear()
    a = intact_adapter.IntactAdapter("scripted:base", attacker="scripted:attacker", levels=3, guesses=1)
    try:
        assert built == ["scripted:base", "scripted:attacker"] and a.attacker is not a.inner
        (result,) = a.generate_batch([ChatRequest.user(f"- Drop the name.\n{TEXT}", max_tokens=64, record=_record(TEXT))])
        assert result.ok and a.attacker.stats.requests > 0 and a.inner.stats.requests > 0
        assert a.attacker.stats.requests == len([p for p in Scripted.seen if p.startswith("In the document below")])
        assert all("Write 2 replacements" in p for p in Scripted.seen if "replacements for the phrase" in p)
    finally:
        a.attacker.close()
        a.inner.close()


@pytest.mark.parametrize("args", [{"levels": 1}, {"guesses": 0}, {"attacker": "decomp:scripted:x"}])
def test_bad_arguments_are_spec_errors(monkeypatch, args):
    monkeypatch.setattr(decomp_adapter, "build_adapter", lambda spec: Scripted(spec.model))
    with pytest.raises(ModelSpecError):
        intact_adapter.IntactAdapter("scripted:base", **args)
    with pytest.raises(ModelSpecError):
        intact_adapter.IntactAdapter("intact:scripted:base")
