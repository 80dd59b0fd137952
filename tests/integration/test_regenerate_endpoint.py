"""``leaderboard verify --regenerate`` through an endpoint the maintainer configures, against a real server: llama.cpp's
own server (xllamacpp) serving the pinned SmolLM2 GGUF stands for a hosted model.

The entry's outputs are first written through that server (as a submitter using the hosted model would), with a
small token budget recorded in its generation settings so the test stays short; regeneration then asks the same
endpoint for the same drawn record and compares by the similarity rule (asking the server twice is not repeatable to
the byte: 0.89 was measured here, so the rule's 0.80 is what this test holds). The same record's output pasted from
another system is not reproduced. (Measured once, not asserted: the seeded SmolLM2 entry, written by the in-process
engine with one thread, is *not* reproduced through this two-thread server: the greedy texts differ
(similarity 0.60 on sample-med-02). A pinned local model is regenerated in process and exactly.)"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.regen_endpoints import load_endpoints
from privasis_bench.leaderboard.regenerate import board_mark, regenerate_entry, sample_ids, write_report
from privasis_bench.tasks.registry import load_task

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SMOLLM2 = REPO / "submissions" / "HuggingFaceTB__SmolLM2-135M-Instruct" / "privasis_sample"
PRESIDIO = REPO / "submissions" / "microsoft__presidio" / "privasis_sample"
BUDGET = 48


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_outputs_written_through_a_llama_cpp_server_are_reproduced_there_and_pasted_ones_are_not(
        llama_server_url: str, tmp_path: Path):
    from privasis_bench.adapters.registry import build_adapter
    from privasis_bench.adapters.spec import ModelSpec
    from privasis_bench.engine.answers import ACCEPT_ALL
    from privasis_bench.engine.executor import Engine
    from privasis_bench.protocol.testee import build_sanitize_request, postprocess_output

    res = json.loads((SMOLLM2 / "results.json").read_text(encoding="utf-8"))
    res["model"]["generation"]["max_tokens"] = BUDGET
    task = load_task("privasis_sample")
    loaded, _ = task_records(task, limit=res["dataset"].get("limit"))
    records = {r.id: r for r in loaded.records}
    rows = copy.deepcopy(_rows(SMOLLM2))
    (drawn,) = sample_ids(rows, 1, 7)
    # the submitter's run: the drawn record's output written through the server
    spec = ModelSpec.parse("openai:smollm2", {"base_url": llama_server_url, "timeout": 1800})
    engine = Engine(build_adapter(spec), spec, role="model", cache=None, progress=False, answers=ACCEPT_ALL)
    try:
        (made,) = engine.run([build_sanitize_request(records[drawn], task, instruction=res.get("instruction"),
                                                     max_tokens=BUDGET, temperature=0.0)], desc="submitter")
    finally:
        engine.close()
    assert made.ok and made.text, made.error
    for row in rows:
        if row["record_id"] == drawn:
            row["output"] = postprocess_output(made.text, task.prompt.answer_cue)

    config = tmp_path / "endpoints.yaml"
    config.write_text(json.dumps({"endpoints": [{
        "model": "llamacpp:smollm2", "spec": "openai:smollm2", "rule": "similarity", "threshold": 0.8,
        "args": {"base_url": llama_server_url, "timeout": 1800}}]}), encoding="utf-8")
    endpoints = load_endpoints(config)
    got = regenerate_entry("hosted/privasis_sample", res, rows, records, task, k=1, seed=7, endpoints=endpoints)
    assert got.passed and got.failed_calls == 0 and got.similarities[0] >= 0.8, got.as_dict()
    write_report(tmp_path / "regenerate.json", [got])
    assert board_mark(tmp_path, "hosted/privasis_sample") == "outputs reproduced (1/1, similarity >= 0.80)"

    pasted = copy.deepcopy(rows)  # another system's output for the same record under this model's name
    other = {r["record_id"]: r["output"] for r in _rows(PRESIDIO)}
    for row in pasted:
        row["output"] = other[row["record_id"]]
    forged = regenerate_entry("hosted/privasis_sample", res, pasted, records, task, k=1, seed=7, endpoints=endpoints)
    assert not forged.passed and forged.similarities[0] < 0.8 and forged.mark() == "outputs as submitted"
