"""Issue 34 point 7: recipe statistics accumulate across resumes and failures, and failed rows keep their statistics.

``<name>.meta.json`` keeps this run's ``counts``, every completed run's (``runs``) and ``cumulative`` statistics
computed from every attempt on disk (finished rows and every failure line, interrupted runs included);
``failures.jsonl`` rows carry the row's own ``stats``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import REPO_ROOT, FakeOpenAIServer

from privasis_bench.recipes.drivers import acceptance
from privasis_bench.recipes.store import RowStore


def _meta(out: Path, name: str = "corpus") -> dict:
    return json.loads((out / f"{name}.meta.json").read_text())


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_store_keeps_every_runs_counts_and_failed_rows_keep_their_statistics(tmp_path: Path) -> None:
    settings = {"recipe": "r"}
    store = RowStore(tmp_path, "corpus", settings)
    store.add_failures([{"id": "a", "error": {"step": "draft", "message": "refusal"}, "stats": {"draft_attempts": 2},
                         "usage": {"prompt_tokens": 3}}])
    store.add([{"id": "b", "stats": {"refinement": [{"accepted": True, "judge": "revised", "delta_vendi": 0.5}]}}])
    store.complete_round({"generated": 1}, {"rows": 1})
    [failure] = _rows(tmp_path / "failures.jsonl")
    assert failure["stats"] == {"draft_attempts": 2} and failure["step"] == "draft" and failure["round"] == 0
    again = RowStore(tmp_path, "corpus", settings)  # the next invocation: a run under way keeps the history
    meta = _meta(tmp_path)
    assert meta["counts"] is None and meta["runs"] == [{"generated": 1}] and meta["cumulative"] == {"rows": 1}
    again.complete_round({"generated": 2}, {"rows": 3})
    meta = _meta(tmp_path)
    assert meta["runs"] == [{"generated": 1}, {"generated": 2}] and meta["counts"] == {"generated": 2}
    assert meta["cumulative"] == {"rows": 3} and meta["rounds_completed"] == 2
    rows, failures = again.attempts()
    assert [r["id"] for r in rows] == ["b"] and [f["id"] for f in failures] == ["a"]


def test_an_older_meta_file_without_history_counts_its_last_run(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text("")
    (tmp_path / "corpus.meta.json").write_text(json.dumps({"settings": {"recipe": "r"}, "counts": {"generated": 3},
                                                          "rounds_completed": 1}))
    store = RowStore(tmp_path, "corpus", {"recipe": "r"})
    assert store.runs == [{"generated": 3}] and store.rounds_completed == 1


def test_build_corpus_failures_keep_their_statistics_and_runs_accumulate(tmp_path: Path, monkeypatch, capsys) -> None:
    src = tmp_path / "in.jsonl"
    row = {"id": "r1", "record": "Dear Lena Okafor, see you on March 14.", "record_type": "email",
           "attributes": {"full_name": "Lena Okafor", "date": "March 14"},
           "grouped_attributes": {"Patient": {"full_name": "Lena Okafor"}, "Visit": {"date": "March 14"}}}
    src.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    argv = ["build-corpus", "-r", "corpus", "-m", "identity", "--judge", "none", "-i", str(src), "-o", str(out),
            "--no-cache", "--no-progress", "--max-attempts", "1"]
    for _ in range(2):  # the identity baseline cannot answer recipe prompts: the row fails in both rounds
        assert run_main(argv, monkeypatch, capsys)[0] == 1
    failures = _rows(out / "failures.jsonl")
    assert [f["round"] for f in failures] == [0, 1]
    assert all(f["stats"] == {"chunks": 1, "targets": 0, "ranking_unparsed": False} for f in failures), failures
    meta = _meta(out, "benchmark")
    assert [r["failed"] for r in meta["runs"]] == [1, 1] and meta["counts"]["failed"] == 1
    assert meta["cumulative"] == {"rows": 0, "failed_attempts": 2, "failed_steps": {"rank": 2}, "ranking_unparsed": 0}


def test_acceptance_sums_every_revision_tried() -> None:
    steps = [{"accepted": True, "judge": "revised", "delta_vendi": 1.0}, {"accepted": False, "judge": "unparsed",
                                                                          "delta_vendi": 0.0}]
    assert acceptance(steps) == {"revisions": 2, "accepted": 1, "judge_preferred_revision": 1, "judge_unparsed": 1,
                                 "mean_delta_vendi": 0.5}
    assert acceptance([])["mean_delta_vendi"] is None


def test_generate_statistics_accumulate_across_resumes_and_failures(tmp_path: Path, monkeypatch, capsys,
                                                                    shared_embeddings) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("vendi_score")
    from recipe_fake_model import answer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / "cache"))
    refused: set[int] = set()

    def refuse_first_drafts(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if prompt.startswith("Profile:") and "Write a realistic" in prompt and len(refused) < 2:
            refused.add(body["seed"])
            return "I'm sorry, I can't help with that."
        return answer(body)

    recipe = tmp_path / "one_try.yaml"  # one id per wanted row: a failed row stays failed until the next round
    recipe.write_text(f"include: {REPO_ROOT / 'tasks' / 'recipes' / 'synthesis.yaml'}\nsynthesis: {{max_attempts_factor: 1}}\n")
    out = tmp_path / "gen"
    with FakeOpenAIServer(answer=refuse_first_drafts) as server:
        spec = f"openai:fake,base_url={server.base_url}"

        def generate(n: int) -> tuple[int, str, str]:
            return run_main(["generate", "-r", str(recipe), "-m", spec, "-n", str(n), "-o", str(out), "--no-progress",
                             "--batch-size", "1"], monkeypatch, capsys)

        generate(1)  # the draft is refused twice: the row fails
        [failure] = _rows(out / "failures.jsonl")
        assert failure["step"] == "draft retry" and failure["stats"]["draft_attempts"] == 2  # its own statistics
        assert generate(1)[0] == 0  # the next round retries it
        code, stdout, err = generate(3)  # extended: two more rows
    assert code == 0, (stdout, err)
    meta = _meta(out)
    assert len(meta["runs"]) == 3 and meta["rounds_completed"] == 3
    cumulative = meta["cumulative"]
    assert cumulative["rows"] == 3 and cumulative["failed_attempts"] == 1 and cumulative["failed_steps"] == {"draft retry": 1}
    tried = [s for r in _rows(out / "corpus.jsonl") for s in r["stats"].get("refinement", [])]
    assert cumulative["acceptance"] == acceptance(tried)
    per_run = sum(r["acceptance"]["revisions"] for r in meta["runs"])
    assert cumulative["acceptance"]["revisions"] == per_run > meta["counts"]["acceptance"]["revisions"]
    total = cumulative["acceptance"]
    assert f"revisions accepted {total['accepted']}/{total['revisions']} over all runs" in stdout
