"""One toy family (tests/toy_family), registered with one line, taken the whole way through the generic commands:
run (its attacker role asked through a local fake OpenAI-compatible server) -> run --plan (the attacker's cost) ->
--batch attacker -> submit -> leaderboard verify (its re-judge re-asks the attacker) -> leaderboard build (its row on
the board) -> view (its viewer) -> rescore and compare (its scorer's), and its own command. Nothing generic names
the family (tests/test_architecture.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import run_main
from fake_openai_server import FakeOpenAIServer

from privasis_bench.tasks.family import FAMILIES
from tests.pipeline.test_family_plugin import rewrite
from tests.toy_family.family import TASK

NAME = "org/toy-writer"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    FAMILIES.register("toy", "tests.toy_family.family:FAMILY")  # the one line a family needs
    yield
    FAMILIES.unregister("toy")


def _ok(got: tuple[int, str, str]) -> str:
    code, out, err = got
    assert code == 0, out + err
    return out + err


def _run(argv: list[str], monkeypatch, capsys) -> str:
    return _ok(run_main(argv, monkeypatch, capsys))


def _run_args(server: FakeOpenAIServer, out: Path, cache: Path) -> list[str]:
    return ["run", "-m", f"openai:writer,base_url={server.base_url}", "-t", TASK, "--role",
            f"attacker=openai:guesser,base_url={server.base_url}", "-o", str(out), "--cache-dir", str(cache),
            "--no-progress"]


def _submitted(tmp_path: Path, monkeypatch, capsys, server: FakeOpenAIServer) -> Path:
    """A toy run made against ``server`` and submitted on the verified track; returns the submissions folder."""
    _run(_run_args(server, tmp_path / "run", tmp_path / "cache"), monkeypatch, capsys)
    subs = tmp_path / "subs"
    _run(["submit", str(tmp_path / "run"), "--name", NAME, "--track", "verified", "--submissions-dir", str(subs)],
         monkeypatch, capsys)
    return subs


def test_the_toy_family_goes_from_run_to_the_board(toy, tmp_path, monkeypatch, capsys):
    pytest.importorskip("openai")
    from fake_batch_server import FakeBatchServer

    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:writer: {input: 1.0, output: 2.0}\nopenai:guesser: {input: 3.0, output: 4.0}\n")
    plan = _run(["run", "-m", "openai:writer", "-t", TASK, "--role", "attacker=openai:guesser", "-o",
                 str(tmp_path / "p"), "--plan", "--no-cache", "--prices", str(prices)], monkeypatch, capsys)
    assert "model openai:writer: 4 requests" in plan and "attacker openai:guesser: at most 4 requests" in plan
    assert "cost at most live 0.0006" in plan  # the attacker's price: 130 x 3 + 64 x 4 per 1M tokens
    assert not (tmp_path / "p").exists()  # nothing is run

    with FakeBatchServer(reply=rewrite) as server:  # the attacker's questions go through the provider's batch API
        _run([*_run_args(server, tmp_path / "batched", tmp_path / "bcache"), "--batch", "attacker", "--batch-quiet",
              "0.2", "--batch-poll", "0.05", "--batch-max-wait", "5"], monkeypatch, capsys)
        assert server.batches and server.live_calls == 4
    batched = json.loads((tmp_path / "batched" / TASK / "results.json").read_text())
    assert batched["metrics"]["protected"] == 0.75 and batched["usage"]["attacker"]["batched_requests"] == 4

    with FakeOpenAIServer(reply=rewrite) as server:
        subs = _submitted(tmp_path, monkeypatch, capsys, server)
        entry = subs / NAME.replace("/", "__") / TASK
        submission = json.loads((entry / "submission.json").read_text())
        assert submission["track"] == "verified" and "custom_inputs" not in submission or not submission["custom_inputs"]
        board = tmp_path / "board"
        before = sum(n for p, n in server.received.items() if p.startswith("Which city"))
        verified = _run(["leaderboard", "verify", str(subs), "--rejudge", "4", "--seed", "3", "--judge-args",
                         f"base_url={server.base_url}", "--report", str(board / "rejudge.json")], monkeypatch, capsys)
        asked = sum(n for p, n in server.received.items() if p.startswith("Which city")) - before
    assert "asking the attacker about up to 4" in verified and "rejudge with openai:guesser" in verified
    assert "4/4 agree" in verified and "1 verified, 0 rejected" in verified and asked == 4

    built = _run(["leaderboard", "build", "--submissions-dir", str(subs), "-o", str(board)], monkeypatch, capsys)
    assert "left off the board" not in built
    rows = json.loads((board / "privasis.json").read_text())["entries"]
    row = next(r for r in rows if r["name"] == NAME)
    assert row["family"] == "toy" and row["protected"] == pytest.approx(75.0) and row["rank"] == 1
    assert row["rejudge_agreement"]["agreed"] == 4
    page = (board / "index.html").read_text()
    assert "Protected" in page and "data-family='toy'" in page and "75.0" in page
    assert any("toy attacker view" in p.read_text() for p in board.rglob("*.html") if p.name != "index.html")
    eee = json.loads(next(board.glob(f"data/*{TASK}/eee.json")).read_text())  # the download names who graded it
    scoring = eee["evaluation_results"][0]["metric_config"]["llm_scoring"]
    assert [j["model_info"]["id"] for j in scoring["judges"]] == ["openai/guesser"]
    assert scoring["input_prompt"].startswith("### attacker: attack\nWhich city does the person")

    viewed = _run(["view", str(tmp_path / "run"), "-o", str(tmp_path / "views")], monkeypatch, capsys)
    page = (tmp_path / "views" / f"{TASK}.html").read_text()
    assert "toy attacker view" in page and "Bergen" in page and "views" in viewed

    rescored = _run(["rescore", str(tmp_path / "run")], monkeypatch, capsys)  # through the family's scorer
    assert "recomputed metrics match results.json" in rescored
    _run(["compare", str(tmp_path / "run"), str(tmp_path / "batched"), "--json", str(tmp_path / "c.json")], monkeypatch,
         capsys)
    compared = json.loads((tmp_path / "c.json").read_text())["tasks"][TASK]
    assert compared["common_records"] == 4 and compared["metrics"]["protected"]["diff"] == 0

    guesses = _run(["toy-guesses", str(tmp_path / "run")], monkeypatch, capsys)  # the family's own command
    assert "n4: 'Bergen' (named)" in guesses and "n1: 'Oslo' (protected)" in guesses


def test_a_dishonest_toy_entry_is_caught_by_the_recomputation_and_by_the_attacker_re_judge(toy, tmp_path, monkeypatch,
                                                                                           capsys):
    with FakeOpenAIServer(reply=rewrite) as server:
        subs = _submitted(tmp_path, monkeypatch, capsys, server)
        entry = subs / NAME.replace("/", "__") / TASK
        rows = [json.loads(x) for x in (entry / "samples.jsonl").read_text().splitlines()]
        forged = [dict(r, guess="Oslo", protected=True) if r["id"] == "n4" else r for r in rows]  # hide the leak
        (entry / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in forged))
        results = json.loads((entry / "results.json").read_text())
        results["metrics"]["protected"] = 1.0
        (entry / "results.json").write_text(json.dumps(results))
        _rehash(entry)
        code, out, err = run_main(["leaderboard", "verify", str(subs), "--rejudge", "4", "--seed", "3",
                                   "--judge-args", f"base_url={server.base_url}"], monkeypatch, capsys)
    assert code == 1
    assert "re-judged with openai:guesser" in out + err and "3/4 of 4 judged attributes agree" in out + err
    assert "note n4: recorded guess 'Oslo', re-asked 'Bergen'" in out + err


def test_a_toy_row_that_contradicts_its_answer_is_refused(toy, tmp_path, monkeypatch, capsys):
    with FakeOpenAIServer(reply=rewrite) as server:
        subs = _submitted(tmp_path, monkeypatch, capsys, server)
    entry = subs / NAME.replace("/", "__") / TASK
    rows = [json.loads(x) for x in (entry / "samples.jsonl").read_text().splitlines()]
    (entry / "samples.jsonl").write_text("".join(json.dumps(dict(r, protected=True)) + "\n" for r in rows))
    _rehash(entry)
    code, out, err = run_main(["leaderboard", "verify", str(subs), "--rejudge", "0"], monkeypatch, capsys)
    assert code == 1
    assert "note n4: protected is True but its guess gives False" in out + err
    assert "metrics.protected: results.json says 0.75" not in out + err  # the board's number is the recomputed 0.75


def _rehash(entry: Path) -> None:
    """Re-seal edited files in submission.json, as a forger would."""
    import hashlib

    sub = json.loads((entry / "submission.json").read_text())
    for name in sub["files"]:
        sub["files"][name] = hashlib.sha256((entry / name).read_bytes()).hexdigest()
    (entry / "submission.json").write_text(json.dumps(sub))
