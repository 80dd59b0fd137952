"""export-sft: the user turn is the sanitize prompt byte for byte; filters, overlap checks, held-out split, counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.engine.executor import Engine
from privasis_bench.pipeline.flow import run_sanitize
from privasis_bench.tasks.registry import builtin_tasks_dir, load_task
from privasis_bench.training.overlap import EvalIndex
from privasis_bench.training.sft_export import ExportSettings, export_sft, report_path
from privasis_bench.training.sources import resolve_sources

SAMPLE = builtin_tasks_dir() / "sample" / "privasis_sample.jsonl"


class RecordingAdapter(Adapter):
    """Answers every request and remembers the exact prompt each record was sent."""

    provider = "recording"
    cacheable = False
    sent: dict[str, str]

    def __init__(self, model: str = "x", **args):
        super().__init__(model, **args)
        self.sent = {}

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        ((role, content),) = request.messages
        assert role == "user"
        self.sent[request.record.id] = content
        return ChatResult(text="ok")


def sample_rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("variant", ["base", "smoothed"])
def test_user_turn_is_byte_identical_to_what_sanitize_sends(tmp_path: Path, variant: str):
    task = load_task("privasis_sample")
    adapter = RecordingAdapter()
    engine = Engine(adapter, ModelSpec("recording", "x"), role="model", cache=None, progress=False)
    sources = resolve_sources(["privasis_sample"])
    run_sanitize(sources[0].loaded.scored, task, engine, tmp_path / "sanitized.jsonl", instruction=variant)
    engine.close()
    export_sft(sources, tmp_path / "train.jsonl", settings=ExportSettings(instruction=variant))
    examples = read_jsonl(tmp_path / "train.jsonl")
    assert len(examples) == 29 and len(adapter.sent) == 27  # every row is a triple; sanitize skips the 2 never scored
    examples = [e for e in examples if e["id"] in adapter.sent]
    assert len(examples) == 27
    for example in examples:
        user, assistant = example["messages"]
        assert user["role"] == "user" and assistant["role"] == "assistant"
        assert user["content"].encode("utf-8") == adapter.sent[example["id"]].encode("utf-8")
        assert example["instruction"] == variant


def test_defaults_follow_the_paper_and_the_card_says_which_rows_were_used(tmp_path: Path):
    from privasis_bench.training.card import _export_line

    sources = resolve_sources(["privasis_sample"])
    export_sft(sources, tmp_path / "train.jsonl")
    examples = read_jsonl(tmp_path / "train.jsonl")
    assert {e["instruction"] for e in examples} == {"smoothed"} and len(examples) == 29
    meta = json.loads(report_path(tmp_path / "train.jsonl").read_text())
    assert _export_line({"export": meta}) == "smoothed instruction; every corpus row, as in the paper (no success filter)"
    export_sft(sources, tmp_path / "f.jsonl", settings=ExportSettings(only_successful=True, instruction="base"))
    meta = json.loads(report_path(tmp_path / "f.jsonl").read_text())
    assert _export_line({"export": meta}).startswith("base instruction; only rows whose own rewrite is fully successful")


def test_a_file_in_the_benchmark_schema_gets_the_prompt_tasks_prompt(tmp_path: Path):
    from_task = resolve_sources(["privasis_sample"])
    from_file = resolve_sources([str(SAMPLE)], prompt_task="privasis_sample")
    export_sft(from_task, tmp_path / "a.jsonl")
    export_sft(from_file, tmp_path / "b.jsonl")
    a, b = read_jsonl(tmp_path / "a.jsonl"), read_jsonl(tmp_path / "b.jsonl")
    assert [x["messages"] for x in a] == [x["messages"] for x in b]


def test_only_rows_whose_own_rewrite_fully_succeeds_are_kept(tmp_path: Path):
    rows = sample_rows()[:6]
    record = resolve_sources([str(write_rows(tmp_path / "probe.jsonl", rows))])[0].loaded.records
    leaky, lossy = record[0], record[1]
    target = next(t for t in leaky.targets if isinstance(t.value, str))
    keep = next(k for k in lossy.keep if isinstance(k.value, str))
    rows[0]["sanitized_record"] += f"\n{target.value}"  # a direct leak of a target
    rows[1]["sanitized_record"] = rows[1]["sanitized_record"].replace(keep.value, "")  # a keep value lost
    sources = resolve_sources([str(write_rows(tmp_path / "rows.jsonl", rows))])
    everything = export_sft(sources, tmp_path / "all.jsonl")  # the paper's default: no filter
    assert everything.train == len(rows) and everything.not_fully_successful == 0
    report = export_sft(sources, tmp_path / "train.jsonl", settings=ExportSettings(only_successful=True))
    ids = {e["id"] for e in read_jsonl(tmp_path / "train.jsonl")}
    assert leaky.id not in ids and lossy.id not in ids
    assert report.not_fully_successful == 2
    assert report.verdicts_deterministic == report.rows - report.no_keep_attributes
    assert report.train == len(ids) == report.rows - report.no_keep_attributes - 2


def test_a_recorded_verdict_is_used_instead_of_the_deterministic_one(tmp_path: Path):
    rows = [r for r in sample_rows() if r["attributes_to_keep"]][:3]
    failed = {"record_id": rows[0]["id"], "category": "", "record_type": "", "output_failed": False,
              "targets": [{"name": "x", "kind": "drop", "group": None, "value": "v", "tier": "inference"}],
              "keep": [{"name": "k", "value": "v", "retained": True, "via": "judge"}]}
    passed = dict(failed, record_id=rows[1]["id"], targets=[dict(failed["targets"][0], tier="sanitized")])
    rows[0]["pipeline"] = {"verdict": failed}  # as build-corpus writes it
    rows[1]["verdict"] = json.dumps(passed)
    report = export_sft(resolve_sources([str(write_rows(tmp_path / "rows.jsonl", rows))]), tmp_path / "train.jsonl",
                        settings=ExportSettings(only_successful=True))
    assert (report.verdicts_recorded, report.verdicts_deterministic) == (2, 1)
    assert [e["id"] for e in read_jsonl(tmp_path / "train.jsonl")] == [rows[1]["id"], rows[2]["id"]]


def test_records_of_evaluation_tasks_are_refused_by_id_text_or_near_duplicate(tmp_path: Path):
    rows = [r for r in sample_rows() if r["attributes_to_keep"]][:4]
    eval_records = resolve_sources([str(write_rows(tmp_path / "eval.jsonl", rows))])[0].loaded.records
    corpus = [dict(rows[0]), dict(rows[1], id="renamed-1"), dict(rows[2], id="renamed-2"), dict(rows[3], id="renamed-3")]
    corpus[1]["original_record"] = "  " + rows[1]["original_record"].upper() + " "  # same text once normalized
    paragraphs = rows[2]["original_record"].split("\n\n")
    corpus[2]["original_record"] = "\n\n".join(paragraphs[:-1] + ["A different closing paragraph."])
    corpus[3]["original_record"] = "Completely unrelated words about gardening tomatoes in the spring sun. " * 3
    corpus[3]["sanitized_record"] = corpus[3]["original_record"]
    corpus[3]["attributes_to_drop"] = {"selected": {"full_name": "Zed Quorra"}, "group": False}
    corpus[3]["attributes_to_abstract"] = None
    corpus[3]["attributes_to_keep"] = {"topic": {"value": "tomatoes", "sanitization": "keep", "group_name": None}}
    sources = resolve_sources([str(write_rows(tmp_path / "corpus.jsonl", corpus))])
    report = export_sft(sources, tmp_path / "train.jsonl", eval_index=EvalIndex.build(eval_records))
    assert report.eval_overlap == {"id": 1, "text": 1, "near_duplicate": 1}
    assert report.overlap_check and report.eval_records_indexed == 4
    assert [e["id"] for e in read_jsonl(tmp_path / "train.jsonl")] == ["renamed-3"]
    open_report = export_sft(sources, tmp_path / "open.jsonl")  # told otherwise: no overlap check
    assert open_report.eval_overlap == {"id": 0, "text": 0, "near_duplicate": 0}
    assert not open_report.overlap_check and open_report.train == 4


def test_heldout_split_is_seeded_stable_and_disjoint_and_mix_uses_both_variants(tmp_path: Path):
    sources = resolve_sources(["privasis_sample"])
    settings = ExportSettings(instruction="mix", heldout_fraction=0.3, seed=7)
    first = export_sft(sources, tmp_path / "t1.jsonl", settings=settings, heldout_path=tmp_path / "h1.jsonl")
    export_sft(sources, tmp_path / "t2.jsonl", settings=settings, heldout_path=tmp_path / "h2.jsonl")
    assert (tmp_path / "t1.jsonl").read_bytes() == (tmp_path / "t2.jsonl").read_bytes()
    train_ids = {e["id"] for e in read_jsonl(tmp_path / "t1.jsonl")}
    held_ids = {e["id"] for e in read_jsonl(tmp_path / "h1.jsonl")}
    assert train_ids and held_ids and not train_ids & held_ids
    assert first.train + first.heldout == 29
    assert set(first.instructions) == {"base", "smoothed"}
    meta = json.loads(report_path(tmp_path / "t1.jsonl").read_text())
    assert meta["report"]["heldout"] == len(held_ids) and meta["settings"]["seed"] == 7
