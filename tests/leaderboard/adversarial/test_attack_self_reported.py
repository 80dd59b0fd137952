"""Attack class *self-reported metadata*: fields a submitter writes that the board shows.

submission.json's judge label and model back-end must be results.json's; the harness version must be a whole
version (never a version followed by free text); a label has a length bound; ``submit`` refuses the settings
``verify`` would reject (one shared check).
"""

from __future__ import annotations

import pytest
from attack_tools import claim
from leaderboard_fakes import TASK, identity_dir, invoke, scrubber_dir

from privasis_bench.leaderboard.submit import SubmissionError, submit_run
from privasis_bench.leaderboard.text_bounds import BOUNDS
from privasis_bench.leaderboard.verify import verify_submission


def test_a_judge_label_that_is_not_the_recorded_judge_is_refused(subs):
    folder = scrubber_dir(subs)
    claim(folder, edit_sub=lambda s: s["judge"].update(label="openai:gpt-oss-120b (paper judge)"))
    problems = verify_submission(folder).problems
    assert any("submission.json: judge.label is 'openai:gpt-oss-120b (paper judge)' but results.json judge.label is "
               "'llamacpp:smollm2'" in p for p in problems), problems


def test_a_model_backend_that_is_not_the_recorded_one_is_refused(subs):
    folder = identity_dir(subs)
    claim(folder, edit_sub=lambda s: s["model"].update(backend={"spacy_model": "en_core_web_trf (GPU cluster)"}))
    assert any("submission.json: model.backend is" in p and "but results.json model.backend is" in p
               for p in verify_submission(folder).problems)


@pytest.mark.parametrize("version,ok", [("0.1.0 (official CI build)", False), ("0.1.0-anything-goes", False),
                                        ("0.1.0x", False), ("0.1.0", True), ("0.1.0.dev3+g1a2b3c", True)])
def test_the_harness_version_is_matched_whole(subs, version, ok):
    folder = identity_dir(subs)
    claim(folder, edit_sub=lambda s: s["harness"].update(version=version))
    problems = verify_submission(folder).problems
    assert (not any("is not a privasis-bench version" in p for p in problems)) is ok, problems


def test_a_million_character_label_is_refused(subs):
    folder = identity_dir(subs)
    claim(folder, edit_sub=lambda s: s.update(label="x" * 1_000_000))
    assert any(f"label has 1000000 characters, more than the {BOUNDS['label']}" in p
               for p in verify_submission(folder).problems)


@pytest.mark.parametrize("option,value,field", [("--bootstrap-samples", "0", "samples"), ("--seed", "7", "seed")])
def test_submit_refuses_the_bootstrap_settings_verify_rejects(tmp_path, option, value, field):
    invoke("run", "-m", "identity", "--judge", "none", "-t", TASK, "--no-progress", "--limit", "3", option, value,
           "-o", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache"))
    # submit verifies the staged folder exactly as verify would (leaderboard/preverify.py) and writes nothing
    with pytest.raises(SubmissionError, match=rf"(?s)verify would refuse.*metrics\.bootstrap\.{field} is {value}, the task "
                                              r"'privasis_sample' sets"):
        submit_run(tmp_path / "run", "org/model", root=tmp_path / "submissions")
    assert not (tmp_path / "submissions").exists()
