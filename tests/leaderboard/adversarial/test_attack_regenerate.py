"""Attack class *which model wrote the outputs* (issue 50.6): another system's outputs pasted under a model's name.
``leaderboard verify --regenerate K`` re-runs the submitted model where the verifier can (pinned local llama.cpp
models, greedy) on K seeded records and compares outputs exactly; the board marks "outputs reproduced (k/K)"."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

import pytest
from adversarial_kit import REPO, read_json, rows_of

from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.regenerate import (
    Regeneration,
    board_mark,
    entry_key,
    regenerable,
    regenerate_entry,
    sample_ids,
    write_report,
)
from privasis_bench.tasks.registry import load_task

SMOLLM2 = REPO / "submissions" / "HuggingFaceTB__SmolLM2-135M-Instruct" / "privasis_sample"


@dataclass
class _Result:
    text: str | None
    ok: bool = True


class _Model:
    """Stands for the pinned model: answers each request with the text ``answers`` gives for its record."""

    def __init__(self, answers):
        self.answers, self.closed = answers, False

    async def agenerate(self, request):
        return _Result(self.answers[request.record.id])

    async def aclose(self):
        self.closed = True


def _inputs():
    res, rows, task = read_json(SMOLLM2 / "results.json"), rows_of(SMOLLM2), load_task("privasis_sample")
    loaded, _ = task_records(task, limit=res["dataset"].get("limit"))
    return res, rows, task, {r.id: r for r in loaded.records}


def test_only_a_pinned_greedy_local_model_is_regenerated():
    res = read_json(SMOLLM2 / "results.json")
    path, rule = regenerable(res)
    assert path is not None and path.suffix == ".gguf" and rule.startswith("exact")
    hosted = copy.deepcopy(res)
    hosted["model"]["spec"]["provider"] = "openai"
    assert regenerable(hosted)[0] is None
    sampled = copy.deepcopy(res)
    sampled["model"]["generation"]["temperature"] = 0.7
    assert "temperature" in regenerable(sampled)[1]
    gguf = copy.deepcopy(res)
    gguf["model"]["spec"]["model"] = str(path)  # a file path: only with the file's recorded sha256
    assert regenerable(gguf)[0] is None


def test_the_draw_is_seeded_and_ignores_row_order():
    rows = rows_of(SMOLLM2)
    assert sample_ids(rows, 2, 5) == sample_ids(list(reversed(rows)), 2, 5)
    assert len(sample_ids(rows, 99, 5)) == sum(isinstance(r.get("output"), str) for r in rows)


def test_outputs_the_model_gives_are_reproduced_and_pasted_ones_are_not():
    res, rows, task, records = _inputs()
    honest = _Model({r["record_id"]: r.get("raw_output") for r in rows})
    got = regenerate_entry("e", res, rows, records, task, k=2, seed=3, build=lambda spec: honest)
    assert (got.asked, got.reproduced, got.mark()) == (2, 2, "outputs reproduced (2/2)") and honest.closed
    assert len(got.model_sha256 or "") == 64
    pasted = copy.deepcopy(rows)  # another system's outputs under this model's name
    for row in pasted:
        if isinstance(row.get("output"), str):
            row["output"] = "[REDACTED] " + row["output"]
    got = regenerate_entry("e", res, pasted, records, task, k=2, seed=3, build=lambda spec: honest)
    assert got.reproduced == 0 and got.mark() == "outputs as submitted" and len(got.differing) == 2


def test_the_board_marks_only_what_the_committed_report_reproduced(tmp_path):
    assert board_mark(REPO / "leaderboards", entry_key(SMOLLM2)) == "outputs reproduced (2/2)"
    intact = REPO / "submissions" / "baselines__intact-smollm2" / "tab_replacement_sample"
    assert board_mark(REPO / "leaderboards", entry_key(intact)) == "outputs reproduced (2/2)"
    assert board_mark(REPO / "leaderboards", "microsoft__presidio/privasis_sample") == "outputs as submitted"
    write_report(tmp_path / "regenerate.json", [Regeneration("a/t", asked=2, reproduced=1, seed=1)])
    assert board_mark(tmp_path, "a/t") == "outputs as submitted"
    body = json.loads((REPO / "leaderboards" / "regenerate.json").read_text(encoding="utf-8"))
    assert body["entries"][entry_key(SMOLLM2)]["model_sha256"]


@pytest.mark.integration
def test_the_seeded_smollm2_entry_regenerates_exactly_with_llama_cpp():
    """The real check behind the committed mark (about 150 s per record on a shared 2-core machine)."""
    res, rows, task, records = _inputs()
    got = regenerate_entry(entry_key(SMOLLM2), res, rows, records, task, k=1, seed=11)
    assert got.passed, got.as_dict()


INTACT = REPO / "submissions" / "baselines__intact-smollm2" / "tab_replacement_sample"


def test_a_wrapper_around_the_pinned_model_is_regenerated_and_one_calling_elsewhere_is_not():
    res = read_json(INTACT / "results.json")
    assert res["testee_prompt"]["shipped"] is False  # an old claim: the recorded digest is the shipped wording
    path, rule = regenerable(res)
    assert path is not None and rule.startswith("exact")
    other = copy.deepcopy(res)
    other["model"]["spec"]["args"] = {"attacker": "openai:gpt-4o"}
    assert regenerable(other)[0] is None and "attacker" in regenerable(other)[1]
    hosted = copy.deepcopy(res)
    hosted["model"]["spec"]["model"] = "openai:gpt-4o"
    assert regenerable(hosted)[0] is None


class _Batched:
    """Stands for a batched wrapper adapter (``intact:``): answers a whole batch at once."""

    batched = True

    def __init__(self, answers):
        self.answers, self.closed = answers, False

    def generate_batch(self, requests):
        return [_Result(self.answers[r.record.id]) for r in requests]

    async def aclose(self):
        self.closed = True


@pytest.mark.slow  # the replacement scorer's records come with its libraries (spaCy, sentence-transformers)
def test_a_batched_wrappers_outputs_are_compared_exactly():
    res, rows = read_json(INTACT / "results.json"), rows_of(INTACT)
    from privasis_bench.tasks.family import scorer_class

    task = load_task("tab_replacement_sample")
    records = {r.id: r for r in scorer_class("tab_replacement")(task).records()}
    model = _Batched({r["id"]: r["output"] for r in rows})
    got = regenerate_entry("e", res, rows, records, task, k=2, seed=11, build=lambda spec: model)
    assert got.mark() == "outputs reproduced (2/2)" and model.closed
    model = _Batched({r["id"]: r["output"] + " extra" for r in rows})
    assert regenerate_entry("e", res, rows, records, task, k=2, seed=11, build=lambda spec: model).reproduced == 0
