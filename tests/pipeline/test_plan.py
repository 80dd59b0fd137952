"""``run --plan``: per role the requests a run will make, estimated prompt tokens and cost live and batched from a
price table, counted from the task, the records and what the cache and the run directory already hold; no call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_batch_server import FakeBatchServer
from fake_openai_server import write_tiny_task

pytest.importorskip("openai")

PRICES = "openai:fake-model:\n  input: 2.0\n  output: 8.0\n  batch_discount: 0.5\nopenai:fake-judge:\n  input: 1.0\n  output: 4.0\n"


def _args(server: FakeBatchServer, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={server.base_url}", "--tasks", str(yaml),
            "--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}", "--output", str(out),
            "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20", "--max-off-label", "100000", *extra]


def _line(stdout: str, role: str) -> str:
    return next(x for x in stdout.splitlines() if x.strip().startswith(role + " "))


def test_plan_counts_costs_and_makes_no_call(tmp_path: Path, monkeypatch, capsys) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=6)
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    out, cache = tmp_path / "out", tmp_path / "cache"
    with FakeBatchServer() as server:
        code, so, se = run_main(_args(server, yaml, out, cache, "--plan", "--prices", str(prices)), monkeypatch, capsys)
        assert code == 0, so + se
        assert not server.http_calls and not out.exists()  # no call, nothing written
        model, judge = _line(so, "model"), _line(so, "judge")
        assert "model openai:fake-model: 6 requests (0 already answered)" in model
        assert "batched no price" in judge and "live no price" not in model
        # the live run then asks exactly that many model requests, and no more judge questions than planned
        code, so2, se = run_main(_args(server, yaml, out, cache), monkeypatch, capsys)
        assert code == 0, so2 + se
        usage = json.loads((out / "tiny" / "results.json").read_text())["usage"]
        planned_judge = int(judge.split("at most ")[1].split(" requests")[0])
        assert usage["model"]["requests"] == 6 and 0 < usage["judge"]["requests"] <= planned_judge
        # live cost 2$/1M in, 8$/1M out; batched half of it
        live = float(model.split("live ")[1].split(",")[0])
        batched = float(model.split("batched ")[1])
        assert batched == pytest.approx(live / 2, abs=1e-4) and live > 0
        # after the run everything is answered: the plan asks nothing
        code, so3, se = run_main(_args(server, yaml, out, cache, "--plan"), monkeypatch, capsys)
        assert code == 0
        assert "model openai:fake-model: 0 requests (6 already answered)" in so3
        assert "judge openai:fake-judge: at most 0 requests (6 already answered)" in so3


@pytest.mark.parametrize("text,needle", [("openai:x: [1]", "expected input/output prices"),
                                         ("openai:x:\n  input: -1\n  output: 1\n", "openai:x.input must be a non-negative"),
                                         ("openai:x:\n  input: 1\n", "openai:x.output is missing"),
                                         ("openai:x:\n  input: 1\n  output: 1\n  cheap: 1\n", "unknown field 'cheap'")])
def test_bad_price_table_is_one_line_exit_2(tmp_path: Path, monkeypatch, capsys, text: str, needle: str) -> None:
    yaml = write_tiny_task(tmp_path / "task", n=2)
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    code, so, se = run_main(["run", "--model", "identity", "--tasks", str(yaml), "--output", str(tmp_path / "o"),
                             "--judge", "none", "--plan", "--prices", str(prices)], monkeypatch, capsys)
    assert code == 2 and needle in se and len(se.strip().splitlines()) == 1, se


def test_plan_counts_a_span_scored_tasks_rewrites(tmp_path: Path, monkeypatch, capsys) -> None:
    code, so, se = run_main(["run", "--model", "identity", "--tasks", "tab_sample", "--judge", "none", "--plan",
                             "--output", str(tmp_path / "o")], monkeypatch, capsys)
    assert code == 0 and "plan for tab_sample (10 records" in so and "model identity: 10 requests" in so
    assert not (tmp_path / "o").exists()
