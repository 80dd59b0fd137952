"""Attack class *preset*: claiming the paper's scoring (``scoring_preset: "paper"``) without having used it.

``verify`` checks the claim like every other setting (the same check ``rescore`` runs): every setting of the preset
at its value, and a judge model; ``run``/``evaluate`` refuse ``--preset paper --judge none``; the board shows each
entry's preset.
"""

from __future__ import annotations

import pytest
from attack_tools import claim, read_json
from leaderboard_fakes import TASK, PinnedNameJudge, identity_dir, invoke, scrubber_dir

import privasis_bench.pipeline.run as runner_mod
from privasis_bench.errors import PrivasisError
from privasis_bench.leaderboard.build import build_board
from privasis_bench.leaderboard.submit import submit_run
from privasis_bench.leaderboard.verify import verify_submission


def _paper(data: dict) -> None:
    data["scoring_preset"] = "paper"


def test_a_default_run_that_claims_the_preset_is_refused(subs):
    folder = scrubber_dir(subs)
    claim(folder, _paper, _paper)  # both files say so, every hash matches
    problems = verify_submission(folder).problems
    assert any(p.startswith(f"{folder / 'results.json'}: judge.empty_outputs: scoring_preset paper requires 'judge'")
               for p in problems), problems
    assert any("judge.inclusion_text: scoring_preset paper requires 'raw'" in p for p in problems)


def test_a_run_without_a_judge_cannot_claim_the_preset_even_with_every_other_setting(subs):
    folder = identity_dir(subs)

    def every_setting(res: dict) -> None:
        _paper(res)
        res["judge"].update(empty_outputs="judge", inclusion_text="raw")
        res["instruction"], res["parse_mode"] = "base", "official"

    claim(folder, every_setting, _paper)
    problems = verify_submission(folder).problems
    assert any("judge.mode: scoring_preset paper requires a judge model, the results record 'none'" in p
               for p in problems), problems


@pytest.mark.parametrize("command", ["run", "evaluate"])
def test_run_and_evaluate_refuse_the_preset_without_a_judge(tmp_path, command):
    source = ["-m", "identity"] if command == "run" else ["-p", str(tmp_path / "preds.jsonl")]
    with pytest.raises(PrivasisError, match="--preset paper needs a judge model"):  # the CLI: one line, exit 2
        invoke(command, *source, "-t", TASK, "--judge", "none", "-o", str(tmp_path / "out"), "--no-progress",
               "--preset", "paper")
    assert not (tmp_path / "out").exists()


def test_the_board_shows_each_entry_preset(made, subs, tmp_path, monkeypatch):
    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: PinnedNameJudge(spec.model) if spec.provider == "llamacpp" else real(spec))
    invoke("run", "-m", "regex-scrubber", "--judge", "llamacpp:smollm2", "-t", TASK, "--no-progress", "--limit", "4",
           "--preset", "paper", "--max-off-label", "100000", "-o", str(tmp_path / "runs/paper"),
           "--cache-dir", str(tmp_path / "cache"))
    submit_run(tmp_path / "runs/paper", "org/paper-scored", track="self-reported", root=subs)
    build_board(subs, tmp_path / "board")
    rows = {e["name"]: e for e in read_json(tmp_path / "board" / "privasis.json")["entries"]}
    assert rows["org/paper-scored"]["scoring_preset"] == "paper"
    assert rows["baselines/regex-scrubber"]["scoring_preset"] == "harness"
    page, markdown = (tmp_path / "board" / "index.html").read_text(), (tmp_path / "board" / "README.md").read_text()
    assert "scoring: paper" in page and "scoring: harness" in page and "scoring: paper" in markdown
