"""``decomp:<spec>`` through a real engine, around a scripted base model."""

from __future__ import annotations

import pytest

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.registry import load_adapter_class
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.records import Attribute, Record
from privasis_bench.engine.executor import Engine
from privasis_bench.recipes import decomp_adapter


class ScriptedBase(Adapter):
    """Names targets, finds spans verbatim, rewrites by replacing spans (or fails on request)."""

    provider = "scripted"
    seen: list[str] = []

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        prompt = request.messages[0][1]
        ScriptedBase.seen.append(prompt)
        if "List each separate piece" in prompt:
            text = "DROP: the name Ana Lima\nABSTRACT: the visit date"
        elif prompt.startswith("Find every"):
            passage = prompt.split("Passage:\n", 1)[1]
            text = "\n".join(f"- {v}" for v in ("Ana Lima", "12 May 2023") if v in passage) or "NONE"
        elif prompt.startswith("Edit the passage"):
            chunk = prompt.split("Passage:\n", 1)[1].rsplit("\n\nChange only", 1)[0]
            if "FAIL" in chunk:
                text = "   "
            else:
                text = chunk.replace("Ana Lima", "the patient").replace("12 May 2023", "May 2023")
        else:
            text = "NONE"
        return ChatResult(text=text, usage=Usage(10, 2))


def _record(text: str) -> Record:
    return Record(id="r", record_type="note", text=text, base_instruction="- Drop the name.\n- Generalize the date.",
                  smoothed_instruction="Hide the name and blur the date.", reference_sanitized="GOLD OUTPUT",
                  targets=(Attribute("name", "Ana Lima", "drop"),), keep=(Attribute("city", "Porto", "keep"),))


@pytest.fixture()
def adapter(monkeypatch):
    monkeypatch.setattr(decomp_adapter, "build_adapter", lambda spec: ScriptedBase(spec.model))
    a = decomp_adapter.DecompAdapter("scripted:base", n_ctx=512)
    yield a
    a.inner.close()


def test_registered_rankable_and_wraps_the_base_spec(adapter):
    assert load_adapter_class("decomp") is decomp_adapter.DecompAdapter and decomp_adapter.DecompAdapter.rankable
    assert adapter.base_spec.key() == 'scripted:base,{"n_ctx": 512}'


def test_sanitizes_through_the_engine_and_sums_sub_call_usage(adapter):
    text = "Ana Lima came in on 12 May 2023.\n\nShe lives in Porto and asked about physiotherapy."
    record = _record(text)
    request = ChatRequest.user(f"Hide the name and blur the date.\n\nText:\n{text}\n", max_tokens=64, record=record)
    ScriptedBase.seen.clear()
    with Engine(adapter, ModelSpec.parse("decomp:scripted:base"), role="model", cache=None, progress=False) as engine:
        (result,) = engine.run([request], desc="t")
    assert result.ok, result.error
    assert result.text == "the patient came in on May 2023.\n\nShe lives in Porto and asked about physiotherapy."
    calls = len(ScriptedBase.seen)
    assert result.usage.prompt_tokens == 10 * calls and result.usage.completion_tokens == 2 * calls
    assert any(p.startswith("Below is a request") and "Hide the name and blur the date." in p for p in ScriptedBase.seen)
    assert not any("GOLD OUTPUT" in p or "'Ana Lima'" in p for p in ScriptedBase.seen)  # reads no gold labels


def test_an_unusable_sub_answer_fails_that_record_only(adapter):
    good, bad = _record("Ana Lima visited."), _record("Ana Lima FAIL visited.")
    requests = [ChatRequest.user(f"- Drop the name.\n- Generalize the date.\n{r.text}", max_tokens=64, record=r) for r in (good, bad)]
    results = adapter.generate_batch(requests)
    assert results[0].ok and results[0].text == "the patient visited."
    assert results[1].text is None and "rewrite" in results[1].error
