"""The sanitization stage: request building, post-processing, resumable atomic output."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from fake_openai_server import write_tiny_task

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.loading import load_records
from privasis_bench.engine.executor import Engine
from privasis_bench.engine.retry import RetryPolicy
from privasis_bench.errors import TaskConfigError
from privasis_bench.pipeline.flow import run_sanitize
from privasis_bench.pipeline.sanitize import OutputMismatchError, SanitizedOutput, meta_path, read_outputs
from privasis_bench.protocol.testee import build_sanitize_request, postprocess_output, render_prompt
from privasis_bench.tasks.registry import load_task

CUE = "### Sanitized text:"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Plain answer.", "Plain answer."),
        ("  padded \n", "padded"),
        ("<think>a</think>one<think>b</think> two ", "two"),  # only after the LAST </think>
        ("reasoning without a start tag</think>\nAnswer", "Answer"),
        ("assistant\nHello there", "Hello there"),
        ("Assistant: Hello there", ": Hello there"),  # the reference rule keeps the colon
        ("ASSISTANT:\n\nHello", ":\n\nHello"),
        ("assistant Hello", "Hello"),
        ("</assistant>\nHello", "Hello"),
        ("<assistant>Hello", "<assistant>Hello"),
        ("assistantship offered", "ship offered"),  # the reference's regex has no word boundary
        (f"Cleaned text\n{CUE}", "Cleaned text"),
        (f"Cleaned text\n{CUE}  \n", "Cleaned text"),
        (f"{CUE}\nCleaned text", "Cleaned text"),
        (f"Intro\n{CUE}\nfirst\n{CUE}\nsecond", "second"),
        (f"<think>plan {CUE} x</think>\nassistant\n{CUE}\nFinal text\n{CUE}", "Final text"),
        ("Keeps {braces} and ### other headings", "Keeps {braces} and ### other headings"),
        ("", ""),
        (CUE, ""),
        ("<think>only thoughts</think>", ""),
    ],
)
def test_postprocess_output(raw: str, expected: str) -> None:
    assert postprocess_output(raw, CUE) == expected


def test_postprocess_with_empty_cue_only_strips() -> None:
    assert postprocess_output(" x ### Sanitized text: y ", "") == "x ### Sanitized text: y"


@pytest.fixture()
def tiny(tmp_path: Path):
    task = load_task(str(write_tiny_task(tmp_path / "task", n=5)))
    return task, load_records(task).records


def test_request_is_one_user_message_in_protocol_order(tiny) -> None:
    task, records = tiny
    record = records[0]
    req = build_sanitize_request(record, task)
    assert len(req.messages) == 1 and req.messages[0][0] == "user"
    content = req.messages[0][1]
    positions = [content.index(record.base_instruction), content.index("rewritten text only"),
                 content.index(record.text), content.index(task.prompt.answer_cue)]
    assert positions == sorted(positions)
    assert "{fee}" in record.text and record.text in content  # braces in the text survive
    assert content.rstrip().endswith(task.prompt.answer_cue)
    assert (req.max_tokens, req.temperature) == (64, 0.0)
    assert req.record is record


def test_request_variants_and_overrides(tiny) -> None:
    task, records = tiny
    smoothed = build_sanitize_request(records[0], task, instruction="smoothed", max_tokens=9, temperature=0.5)
    content = smoothed.messages[0][1]
    assert records[0].smoothed_instruction in content and records[0].base_instruction not in content
    assert (smoothed.max_tokens, smoothed.temperature) == (9, 0.5)
    assert smoothed.prompt_hash() != build_sanitize_request(records[0], task).prompt_hash()


def test_render_is_single_pass() -> None:
    out = render_prompt("I={instruction}\nT={text}\n{other}", "say {text}", "a {instruction} b")
    assert out == "I=say {text}\nT=a {instruction} b\n{other}"


def test_template_without_placeholder_is_a_config_error(tiny, tmp_path: Path) -> None:
    task, records = tiny
    bad = tmp_path / "bad.txt"
    bad.write_text("Only {text} here\n### Sanitized text:")
    broken = task.model_copy(update={"prompt": task.prompt.model_copy(update={"template": str(bad)})})
    with pytest.raises(TaskConfigError, match=r"\{instruction\}"):
        build_sanitize_request(records[0], broken)


class Upper(Adapter):
    """Answers with a cue-wrapped upper-cased text; ``fail`` ids fail with a 500 forever."""

    provider = "upper"

    def __init__(self, fail: set[str] = frozenset()) -> None:
        super().__init__("m")
        self.fail = set(fail)
        self.calls: Counter[str] = Counter()

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        rid = request.record.id
        self.calls[rid] += 1
        if rid in self.fail:
            raise AdapterError("HTTP 500 upstream", retryable=True, status=500)
        return ChatResult(text=f"assistant\n{rid.upper()} done\n### Sanitized text:", finish_reason="stop", usage=Usage(10, 3))


def _engine(adapter: Adapter, spec: str = "upper:m") -> Engine:
    return Engine(adapter, ModelSpec.parse(spec), role="model", cache=None,
                  retry=RetryPolicy(max_attempts=2, base_delay=0.0, jitter=0.0), progress=False)


def test_run_writes_one_line_per_record_in_order(tiny, tmp_path: Path) -> None:
    task, records = tiny
    out = tmp_path / "run" / "sanitized.jsonl"
    outputs = run_sanitize(records, task, _engine(Upper()), out, instruction="base")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [l["id"] for l in lines] == [r.id for r in records] == [o.id for o in outputs]
    first = lines[0]
    assert first["output"] == "R000 done" and first["raw_output"].startswith("assistant\n")
    assert first["error"] is None and first["finish_reason"] == "stop" and first["model"] == "upper:m"
    assert first["prompt_hash"] == build_sanitize_request(records[0], task).prompt_hash()
    meta = json.loads(meta_path(out).read_text())
    assert meta["settings"]["instruction"] == "base" and meta["counts"]["ok"] == 5 and meta["complete"]
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]


def test_failures_are_recorded_then_retried_on_resume(tiny, tmp_path: Path) -> None:
    task, records = tiny
    out = tmp_path / "sanitized.jsonl"
    flaky = Upper(fail={"r002"})
    outputs = run_sanitize(records, task, _engine(flaky), out)
    failed = [o for o in outputs if not o.ok]
    assert [o.id for o in failed] == ["r002"]
    assert failed[0].output is None and failed[0].raw_output is None and "HTTP 500" in failed[0].error
    assert json.loads(meta_path(out).read_text())["complete"] is False

    healed = Upper()
    outputs = run_sanitize(records, task, _engine(healed), out)
    assert all(o.ok for o in outputs) and healed.calls == Counter({"r002": 1})
    assert [o.id for o in read_outputs(out).values()] == [r.id for r in records]


def test_resume_ignores_a_truncated_last_line(tiny, tmp_path: Path) -> None:
    task, records = tiny
    out = tmp_path / "sanitized.jsonl"
    run_sanitize(records[:3], task, _engine(Upper()), out)
    text = out.read_text()
    out.write_text(text[: len(text) - 25])  # a crash cut the third line short
    adapter = Upper()
    outputs = run_sanitize(records, task, _engine(adapter), out)
    assert adapter.calls == Counter({"r002": 1, "r003": 1, "r004": 1})
    assert [o.output for o in outputs] == [f"{r.id.upper()} done" for r in records]
    assert len(out.read_text().splitlines()) == 5


def test_resume_with_nothing_left_makes_no_call(tiny, tmp_path: Path) -> None:
    task, records = tiny
    out = tmp_path / "sanitized.jsonl"
    first = run_sanitize(records, task, _engine(Upper()), out)
    adapter = Upper()
    second = run_sanitize(records, task, _engine(adapter), out)
    assert sum(adapter.calls.values()) == 0
    assert [o.to_dict() for o in first] == [o.to_dict() for o in second]


def test_smaller_limit_keeps_earlier_lines(tiny, tmp_path: Path) -> None:
    task, records = tiny
    out = tmp_path / "sanitized.jsonl"
    run_sanitize(records, task, _engine(Upper()), out)
    outputs = run_sanitize(records[:2], task, _engine(Upper()), out)
    assert [o.id for o in outputs] == ["r000", "r001"]
    assert list(read_outputs(out)) == [r.id for r in records]


def test_mismatched_settings_are_refused(tiny, tmp_path: Path) -> None:
    task, records = tiny
    out = tmp_path / "sanitized.jsonl"
    run_sanitize(records[:2], task, _engine(Upper()), out)
    with pytest.raises(OutputMismatchError, match="instruction"):
        run_sanitize(records[:2], task, _engine(Upper()), out, instruction="smoothed")
    with pytest.raises(OutputMismatchError, match="model"):
        run_sanitize(records[:2], task, _engine(Upper(), "upper:other"), out)
    with pytest.raises(OutputMismatchError, match="max_tokens"):
        run_sanitize(records[:2], task, _engine(Upper()), out, max_tokens=10)
    adapter = Upper()
    outputs = run_sanitize(records[:2], task, _engine(adapter, "upper:other"), out, overwrite=True)
    assert all(o.model == "upper:other" for o in outputs) and sum(adapter.calls.values()) == 2
    out.unlink()  # outputs deleted by hand: the leftover sidecar does not block a new run
    assert len(run_sanitize(records[:2], task, _engine(Upper()), out, temperature=0.7)) == 2


def test_sanitized_output_round_trip() -> None:
    item = SanitizedOutput(id="a", prompt_hash="h", raw_output="x", output="x", finish_reason="length",
                           usage=Usage(1, 2), error=None, cached=True, model="p:m", attempts=3)
    assert SanitizedOutput.from_dict(json.loads(json.dumps(item.to_dict()))) == item
