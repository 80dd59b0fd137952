"""``leaderboard verify --regenerate`` through an endpoint the maintainer configures, against a real server: llama.cpp's
own server (xllamacpp) serving the pinned SmolLM2 GGUF stands for a hosted copy of the submitted model. The seeded
SmolLM2 entry's outputs were written in process; the server's are compared by the similarity rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.leaderboard.data_source import task_records
from privasis_bench.leaderboard.regen_endpoints import load_endpoints
from privasis_bench.leaderboard.regenerate import board_mark, entry_key, regenerate_entry, write_report
from privasis_bench.tasks.registry import load_task

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SMOLLM2 = REPO / "submissions" / "HuggingFaceTB__SmolLM2-135M-Instruct" / "privasis_sample"


def test_the_seeded_smollm2_entry_is_reproduced_through_a_llama_cpp_server(llama_server_url: str, tmp_path: Path):
    config = tmp_path / "endpoints.yaml"
    config.write_text(json.dumps({"endpoints": [{
        "model": "llamacpp:smollm2", "spec": "openai:smollm2", "rule": "similarity", "threshold": 0.9,
        "args": {"base_url": llama_server_url, "timeout": 1800}}]}), encoding="utf-8")
    res = json.loads((SMOLLM2 / "results.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (SMOLLM2 / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    task = load_task("privasis_sample")
    loaded, _ = task_records(task, limit=res["dataset"].get("limit"))
    # seed 7 draws sample-med-02, whose recorded output ended well before the token budget (a short generation)
    got = regenerate_entry(entry_key(SMOLLM2), res, rows, {r.id: r for r in loaded.records}, task, k=1, seed=7,
                           endpoints=load_endpoints(config))
    assert got.passed and got.failed_calls == 0, got.as_dict()
    assert got.endpoint == "openai:smollm2" and got.similarities[0] >= 0.9
    write_report(tmp_path / "regenerate.json", [got])
    assert board_mark(tmp_path, entry_key(SMOLLM2)) == "outputs reproduced (1/1, similarity >= 0.90)"
