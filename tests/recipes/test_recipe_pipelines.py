"""Both recipe pipelines over a batch with a scripted model: real rows come out, bad answers fail their row."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.data.normalize import normalize_row
from privasis_bench.protocol.judge import JudgeSettings
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.recipes.config import load_recipe
from privasis_bench.recipes.corpus import CorpusContext, build_batch, to_benchmark_row
from privasis_bench.recipes.drivers import run_build_corpus
from privasis_bench.recipes.seeds import SeedFiles
from privasis_bench.recipes.store import RowStore
from privasis_bench.recipes.synthesis import (
    SynthesisContext,
    seed_rows,
    synthesize_batch,
    to_corpus_row,
    validate_corpus_row,
)
from privasis_bench.tasks.registry import load_task

pytest.importorskip("rouge_score")
pytest.importorskip("rapidfuzz")

RECORD = ("Dear Lena Okafor,\n\nYour cleaning is booked for March 14, 2024 at the Elm Street Clinic. "
          "Call +1 555 0142 with questions.\n\nKind regards, Porto front desk.")
ATTRS = {"full_name": "Lena Okafor", "visit_date": "March 14, 2024", "clinic": "Elm Street Clinic",
         "phone": "+1 555 0142", "city": "Porto"}
GROUPS = {"Patient": {"full_name": "Lena Okafor"}, "Visit": {"visit_date": "March 14, 2024", "clinic": "Elm Street Clinic"},
          "Contact": {"phone": "+1 555 0142", "city": "Porto"}}


def _result(text: str | None) -> ChatResult:
    return ChatResult(text=text, usage=Usage(5, 7)) if text is not None else ChatResult(text=None, error="HTTP 500")


def corpus_model(requests: list[ChatRequest], step: str) -> list[ChatResult]:
    out = []
    for r in requests:
        prompt = r.messages[0][1]
        if step == "rank":
            out.append(_result("1. full_name\n2. phone\n3. Visit"))
        elif step in ("spans", "spans_retry"):
            value = re.search(r"Known value: (.*)", prompt)
            out.append(_result("- a span the passage does not contain" if step == "spans" else "NONE"))
            del value
        elif step == "strategy":
            out.append(_result("Generalize it to a vague description."))
        elif step.startswith("rewrite"):
            chunk = prompt.split("Passage:\n", 1)[1].rsplit("\n\nChange only", 1)[0]
            spans = re.findall(r"^- (.*)$", prompt.split("Passage:")[0], re.M)
            for s in spans:
                chunk = chunk.replace(s, "[redacted]")
            out.append(_result(chunk))
        elif step == "smooth":
            out.append(_result("Please tidy up the private bits of my note."))
        else:
            out.append(_result("?"))
    return out


def _ctx(model=corpus_model) -> CorpusContext:
    task = load_task("privasis_sample")
    return CorpusContext(load_recipe("corpus"), model, JudgePrompts.load(task.judge.templates), JudgeSettings(enabled=False), None)


def test_corpus_rows_are_benchmark_rows_and_failures_are_recorded():
    inputs = [
        {"id": "good", "record": RECORD, "record_type": "email", "attributes": ATTRS, "grouped_attributes": GROUPS},
        {"id": "no-text", "record": "", "attributes": ATTRS},
        {"id": "absent", "record": "Nothing private here at all.", "attributes": {"full_name": "Zed Q"},
         "grouped_attributes": {"P": {"full_name": "Zed Q"}}},
    ]
    rows = build_batch(inputs, _ctx())
    by_id = {r["id"]: r for r in rows}
    assert by_id["no-text"]["error"]["step"] == "input"
    assert by_id["absent"]["error"]["step"] == "spans" and "no span" in by_id["absent"]["error"]["message"]
    good = by_id["good"]
    assert not good.get("error"), good.get("error")
    row = to_benchmark_row(good)
    record = normalize_row(row, row_number=0)
    assert record.targets and record.text == RECORD
    assert row["sanitized_record"] != RECORD and "[redacted]" in row["sanitized_record"]
    for target in record.targets:  # the scripted rewrite removes every verbatim value it was pointed at
        assert str(target.value) not in row["sanitized_record"]
    assert row["split"] in ("vanilla", "hard", "unscored")
    assert row["base_instruction"].startswith("- ")
    assert good["usage"]["calls"] > 0


def test_failed_model_call_fails_only_its_row(tmp_path):
    def flaky(requests, step):
        results = corpus_model(requests, step)
        return [_result(None) if step == "smooth" and "Lena" in str(requests[i].messages) else res
                for i, res in enumerate(results)]

    other = {"id": "b", "record": RECORD.replace("Lena Okafor", "Ravi Menon"), "record_type": "email",
             "attributes": {**ATTRS, "full_name": "Ravi Menon"}, "grouped_attributes": {**GROUPS, "Patient": {"full_name": "Ravi Menon"}}}
    first = {"id": "a", "record": RECORD, "record_type": "email", "attributes": ATTRS, "grouped_attributes": GROUPS}
    store = RowStore(tmp_path, "benchmark", {"k": 1})
    summary = run_build_corpus([first, other], _ctx(flaky), store, batch_size=2, log=lambda m: None)
    assert summary["built"] + summary["failed"] == 2
    assert {f["id"] for f in store.failures()} | store.done_ids() == {"a", "b"}
    assert all(f["message"] for f in store.failures())
    # resume: finished rows are skipped, the failed ones tried again
    again = run_build_corpus([first, other], _ctx(), store, batch_size=2, log=lambda m: None)
    assert again["resumed"] == summary["built"] and store.done_ids() == {"a", "b"}
    assert (tmp_path / "task.yaml").read_text().count("\n") == 3


REFUSE_FOR = {"name": "nobody"}
FACTS = ["Lena Okafor visited the Elm Street Clinic in Porto on 2021-03-04 for a check-up.",
         "The nurse measured a blood pressure of 128/84 and noted a mild pollen allergy.",
         "A follow-up was pencilled in for the second week of April, pending the lab results.",
         "Billing code 7731-B covered the consultation; the co-payment came to 18.40 EUR.",
         "Her employer, Duarte Logistics, had requested a fitness-to-work note after the shift change.",
         "The receptionist reminded her to bring the vaccination card and the referral letter."]


def synthesis_model(requests, step):
    out = []
    for r in requests:
        prompt = r.messages[0][1]
        if step == "profile":
            out.append(_result("Last Name: Okafor\nSex: female\nEthnicity: Black\nPhone Number: +1 555 0142\nEmail: lena@example.org"))
        elif step in ("record_types", "contexts", "formats"):
            out.append(_result("1. Clinic reminder e-mail from Elm Street Clinic\n2. Insurance letter from Acme Mutual"))
        elif step.startswith("draft"):
            refuse = REFUSE_FOR["name"] in prompt
            body = "\n".join(" ".join(FACTS[i:] + FACTS[:i]) for i in range(3))
            out.append(_result("I'm sorry, I can't help with that." if refuse else body))
        elif step.startswith("revise"):
            out.append(_result(prompt.split("\n\n")[1] + " She paid 120.50 EUR by card."))
        elif step.startswith("prefer"):
            out.append(_result("A"))
        elif step == "annotate":
            out.append(_result("clinic_name: Elm Street Clinic\ncity: Porto\nvisit_date: 2021-03-04\nbogus: not in the text"))
        elif step == "group":
            out.append(_result("Identity: full_name, last_name\nVisit details: clinic_name, visit_date, city\nPlaces: city, clinic_name"))
        else:
            out.append(_result("?"))
    return out


def _embed(texts):
    return np.vstack([np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8)[:16].astype(float) + 1 for t in texts])


def test_synthesis_batch_writes_schema_valid_rows_and_records_failures():
    recipe = load_recipe("synthesis")
    ctx = SynthesisContext(recipe, SeedFiles.load(recipe), synthesis_model, synthesis_model, _embed)
    ids = [f"t-{i}" for i in range(6)]
    REFUSE_FOR["name"] = seed_rows(ids[:1], ctx)[0]["seed"]["first_name"]
    rows = synthesize_batch(ids, ctx)
    good = [r for r in rows if not r.get("error")]
    assert good, [r.get("error") for r in rows]
    for row in good:
        out = to_corpus_row(row)
        validate_corpus_row(out)
        assert "bogus" not in out["attributes"], "values absent from the text are not annotations"
        assert out["attributes"]["clinic_name"] == "Elm Street Clinic"
        assert len(out["stats"]["refinement"]) == recipe.synthesis.refine_steps
        assert out["profile"]["full_name"].endswith("Okafor")
    refused = [r for r in rows if r["seed"]["first_name"] == REFUSE_FOR["name"]]
    assert refused and all(r["error"]["step"] == "draft retry" and "refusal" in r["error"]["message"] for r in refused)
    assert all(not r.get("error") for r in rows if r not in refused)
    assert [r["seed"] for r in rows] == [r["seed"] for r in synthesize_batch(ids, ctx)]


def test_filters_drop_short_minor_refusal_and_looping_records():
    from privasis_bench.recipes.synthesis import filters

    recipe = load_recipe("synthesis")
    ctx = SynthesisContext(recipe, SeedFiles.load(recipe), synthesis_model, synthesis_model, _embed)
    varied = " ".join(FACTS * 2)
    loop = "I have used the full name of the partner to write the thread. " * 5 + varied
    rows = [{"id": str(i), "text": t, "profile": {"age": a}} for i, (t, a) in enumerate(
        [("too short", "40"), (varied, "16"), ("I'm sorry, I can't help with that. " + varied, "40"), (loop, "40"), (varied, "40")])]
    filters(rows, ctx)
    messages = [r.get("error", {}).get("message", "") for r in rows]
    assert "fewer than 64 words" in messages[0] and "under 18" in messages[1] and "refusal" in messages[2]
    assert "repeated 5 times" in messages[3] and messages[4] == ""
