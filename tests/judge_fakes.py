"""Test doubles for the judge: tagged templates, a scripted batch runner and a deterministic adapter.

The templates put a tag and fields separated by the ASCII unit separator in each prompt, so a fake can read back exactly
what the judge asked without depending on our real prompt wording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage

TEMPLATES = {
    "guess_target": "GUESS_TARGET\x1f{attribute}\x1f{text}",
    "guess_abstract": "GUESS_ABSTRACT\x1f{attribute}\x1f{text}",
    "guess_keep": "GUESS_KEEP\x1f{attribute}\x1f{text}",
    "compare": "COMPARE\x1f{attribute}\x1f{response1}\x1f{response2}\x1f{true_value}",
    "inclusion": "INCLUDE\x1f{text}\x1f{guess}\x1f{information}",
}
SEP = "\x1f"


def write_templates(directory: Path) -> Path:
    """Write the tagged templates as ``<key>.txt`` files (a ``--judge-prompts`` directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    for key, text in TEMPLATES.items():
        (directory / f"{key}.txt").write_text(text, encoding="utf-8")
    return directory


def parse_prompt(prompt: str) -> tuple[str, list[str]]:
    """(tag, fields) of a prompt built from :data:`TEMPLATES`."""
    tag, *fields = prompt.split(SEP)
    return tag, fields


Answer = Callable[[str, list[str]], "str | None"]


class ScriptedRunner:
    """A BatchRunner: ``answer(tag, fields)`` gives each reply (None = failed call). Logs every prompt."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.batches: list[int] = []

    def __call__(self, requests: list[ChatRequest]) -> list[ChatResult]:
        self.batches.append(len(requests))
        out = []
        for request in requests:
            prompt = request.messages[0][1]
            self.prompts.append(prompt)
            text = self.answer(*parse_prompt(prompt))
            out.append(ChatResult(text=None, error="scripted failure") if text is None else ChatResult(text=text))
        return out

    def tags(self) -> list[str]:
        return [parse_prompt(p)[0] for p in self.prompts]


def deterministic_answer(tag: str, fields: list[str]) -> str:
    """A fixed, content-dependent judge: answers depend only on the prompt."""
    if tag.startswith("GUESS"):
        words = SEP.join(fields[1:]).split()
        return "Maybe " + " ".join(words[:3])
    if tag == "COMPARE":
        _, r1, r2, _true = fields
        return "Response 1." if r1 == r2 else "neither"
    if tag == "INCLUDE":
        text, _guess, info = fields
        return "YES" if info[:4].lower() in text.lower() else "NO"
    raise AssertionError(f"unexpected prompt tag {tag!r}")


class FakeJudgeAdapter(Adapter):
    """A deterministic judge adapter (provider ``fakejudge``); every call is logged in ``CALLS``."""

    provider = "fakejudge"
    CALLS: list[str] = []
    #: Fault injection: calls whose prompt tag equals this fail (set by a test, not part of the spec).
    FAIL_TAG: str | None = None
    #: Fault injection: calls whose prompt tag equals this stop at the token budget (a cut answer, finish "length").
    CUT_TAG: str | None = None

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        prompt = request.messages[0][1]
        FakeJudgeAdapter.CALLS.append(prompt)
        fail_tag = FakeJudgeAdapter.FAIL_TAG
        if fail_tag and parse_prompt(prompt)[0] == fail_tag:
            raise AdapterError(f"scripted failure on {fail_tag}", retryable=False, status=400)
        if FakeJudgeAdapter.CUT_TAG and parse_prompt(prompt)[0] == FakeJudgeAdapter.CUT_TAG:
            return ChatResult(text=deterministic_answer(*parse_prompt(prompt))[:2], finish_reason="length",
                              usage=Usage(len(prompt) // 4, 3))
        return ChatResult(text=deterministic_answer(*parse_prompt(prompt)), usage=Usage(len(prompt) // 4, 3))
