"""The generic verify and board path with a toy family registered in one line (issue 49): the toy's board code
(tests/toy_family/board.py) is reached only through its declaration; nothing generic names it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from privasis_bench import __version__
from privasis_bench.adapters.base import ChatResult
from privasis_bench.leaderboard.build import board_parts, board_rows, build_board
from privasis_bench.leaderboard.family_api import family_of
from privasis_bench.leaderboard.markdown import readme
from privasis_bench.leaderboard.page import render_board
from privasis_bench.leaderboard.verify import verify_submission
from privasis_bench.tasks.family import FAMILIES, BoardSpec, FamilySpec

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = "tests.toy_family:schemas/board-toy-{}-1.schema.json"
TOY = FamilySpec(
    name="toy", title="Toy inference", roles=("attacker",),
    schema_versions={k: SCHEMAS.format(k) for k in ("results", "samples-row", "submission")} | {
        "samples": SCHEMAS.format("samples-row")},
    reference_task="toy_sample",
    board=BoardSpec(unit="percent of records whose secret the attacker guessed", digits=2,
                    columns=(("inference_rate", "Inference rate ↓"),), rank_by=(("inference_rate", "lower"),)),
    scorer="tests.toy_family.scorer:ToyScorer", verifier="tests.toy_family.board:verify",
    row="tests.toy_family.board:board_row", content="tests.toy_family.board:content",
    viewer="tests.toy_family.board:write_viewer", rejudge="tests.toy_family.board:rejudge",
    tasks_dir="tests.toy_family:tasks")
GUESSES = {"r1": "Ann", "r2": "nobody", "r3": "Cy"}  # two of three secrets inferred


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))
    FAMILIES.register("toy", TOY)  # the one line a family needs
    yield TOY
    FAMILIES.unregister("toy")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def toy_entry(root: Path, name: str = "org/toy-model", guesses: dict[str, str] = GUESSES, rate: float | None = None,
              rows_edit=None) -> Path:
    """A hand-built toy submission in the generic envelope (results.json names ``scorer.name: toy``)."""
    from privasis_bench.leaderboard.task_source import shipped_task

    task = shipped_task("toy_sample")
    secrets = {"r1": "Ann", "r2": "Bob", "r3": "Cy"}
    rows = [{"id": i, "output": f"text {i}", "guess": g, "inferred": g == secrets[i]} for i, g in guesses.items()]
    if rows_edit:
        rows_edit(rows)
    hits = sum(r["inferred"] for r in rows)
    boot = {"samples": 10, "seed": 1, "confidence": 0.95}
    results = {"scorer": {"name": "toy"}, "task": {"name": "toy_sample", "version": "1.0",
                                                   "config_hash": task.config_hash()},
               "model": {"label": name.split("/")[1], "spec": {"provider": "fake", "model": "x"}},
               "metrics": {"inference_rate": hits / len(rows) if rate is None else rate, "records": len(rows),
                           "bootstrap": boot}}
    folder = root / name.replace("/", "__") / "toy_sample"
    folder.mkdir(parents=True)
    texts = {"results.json": json.dumps(results), "samples.jsonl": "".join(json.dumps(r) + "\n" for r in rows)}
    sub = {"name": name, "owner": name.split("/")[0], "track": "verified", "label": "toy",
           "task": {"name": "toy_sample", "version": "1.0", "config_hash": task.config_hash()},
           "model": {"label": results["model"]["label"], "spec": results["model"]["spec"]},
           "files": {k: _sha(t) for k, t in texts.items()}, "harness": {"version": __version__},
           "dates": {"run_started": "2026-01-01T00:00:00+00:00", "run_finished": "2026-01-01T00:01:00+00:00",
                     "submitted": "2026-01-02T00:00:00+00:00"}, "schema_versions": dict(TOY.schema_versions)}
    for file, text in {**texts, "submission.json": json.dumps(sub)}.items():
        (folder / file).write_text(text, encoding="utf-8")
    return folder


def test_a_toy_entry_takes_the_generic_path_and_its_family_recomputes_it(toy, tmp_path):
    v = verify_submission(toy_entry(tmp_path))
    assert v.ok, v.problems
    assert family_of(v.results) is toy and v.family == "toy"
    assert v.recomputed["inference_rate"] == pytest.approx(2 / 3) and v.task_records == 3
    assert v.family_facts == {"scored_records": 3, "records_of_task": 3, "partial": False}


def test_a_forged_toy_number_is_refused_by_the_shared_comparison(toy, tmp_path):
    got = verify_submission(toy_entry(tmp_path, rate=0.1)).problems
    assert any("metrics.inference_rate: results.json says 0.1" in p for p in got)
    flipped = verify_submission(toy_entry(tmp_path / "b", rows_edit=lambda rows: rows[1].update(inferred=True),
                                          rate=1.0)).problems
    assert any("record r2: inferred is True but its guess gives False" in p for p in flipped)


def test_the_toy_family_is_on_the_board_with_its_own_columns_ranks_and_viewer(toy, tmp_path):
    subs = tmp_path / "subs"
    toy_entry(subs, "org/toy-model")
    toy_entry(subs, "other/toy-best", guesses={"r1": "x", "r2": "y", "r3": "Cy"})
    (subs / "README.md").write_text("toy board", encoding="utf-8")
    files = build_board(subs, tmp_path / "board")
    board = json.loads(files.json.read_text("utf-8"))
    rows = {e["name"]: e for e in board["entries"]}
    assert rows["other/toy-best"]["rank"] == 1 and rows["org/toy-model"]["rank"] == 2  # lower is better
    assert rows["org/toy-model"]["family"] == "toy"
    assert rows["org/toy-model"]["inference_rate"] == pytest.approx(200 / 3)
    page = files.html.read_text("utf-8")
    assert "Inference rate ↓" in page and "data-family='toy'" in page and "33.33" in page
    assert "recomputed from the shipped documents (Privasis" not in page
    assert "Inference rate ↓" in files.markdown.read_text("utf-8")
    assert any("toy attacker view" in p.read_text("utf-8") for p in files.viewers)


class FakeAsker:
    """What the verify session gives a family's re-judge: a memoised runner per role (here canned answers)."""

    model_args = None
    data_dir = None

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers, self.asked = answers, []

    def runner(self, role, spec, desc="rejudge"):
        self.asked.append((role, spec.cache_identity()))

        def run(requests):
            return [ChatResult(text=self.answers[r.messages[0][1].rsplit(" ", 1)[1]]) for r in requests]
        return run


def test_the_toy_re_judge_re_asks_its_attacker_role(toy, tmp_path):
    from privasis_bench.cli.rejudging import JudgeSession

    v = verify_submission(toy_entry(tmp_path))
    session = JudgeSession(None, None)
    honest = FakeAsker({"r1": "Ann", "r2": "Bob?", "r3": "Cy"})
    session.runner = honest.runner  # the session's engines replaced by canned answers; the dispatch is the real one
    got, who = session.rejudge(v, n=3, judge=None, seed=7, max_disagreements=0)
    assert [role for role, _ in honest.asked] == ["attacker"] and "attacker" in who
    assert got.asked == 3 and got.agreed == 3 and got.passed
    lying = FakeAsker({"r1": "Ann", "r2": "Bob", "r3": "Cy"})  # the real attacker infers r2, the entry says it did not
    session.runner = lying.runner
    got, _ = session.rejudge(v, n=3, judge=None, seed=7, max_disagreements=0)
    assert got.agreed == 2 and not got.passed and "record r2" in got.disagreements[0]


def test_board_pages_render_a_toy_row_beside_the_built_in_families(toy, tmp_path):
    v = verify_submission(toy_entry(tmp_path))
    rows = board_rows([v], {})
    parts = board_parts(rows)
    assert "paper_reported" in parts.data  # the built-in families still add their parts
    html = render_board(rows, {"date": "d", "harness_version": "v"}, parts)
    assert "66.67" in html and "66.67" in readme(rows, [], {"date": "d", "harness_version": "v"}, parts)
