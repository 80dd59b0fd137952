"""Issue 51.8: a TAB entry whose results.json claims another spaCy pipeline (the official ``en_core_web_md``) than the
one its tokens were tagged with does not verify: the board shows only what the verifier computed."""

from __future__ import annotations

import pytest
from adversarial_kit import problems, read_json, rewrite, tab_entry


def test_an_untouched_tab_entry_verifies(tmp_path):
    assert not [p for p in problems(tab_entry(tmp_path)) if "scorer.tokens" in p]


@pytest.mark.parametrize("key, value", [("spacy_pipeline", "en_core_web_md"), ("spacy_pipeline_version", "9.9.9")])
def test_a_tab_entry_claiming_another_pipeline_is_refused(key, value, tmp_path):
    folder = tab_entry(tmp_path)
    res = read_json(folder / "results.json")
    res["scorer"]["tokens"][key] = value
    rewrite(folder, results=res)
    found = problems(folder)
    assert any(f"scorer.tokens.{key} is {value!r}, but the verifier tagged with" in p for p in found), found


def test_verification_tells_each_entry_before_verifying_it(tmp_path):
    """``leaderboard build`` verifies for minutes: each entry is announced (build prints these lines on stderr)."""
    from privasis_bench.leaderboard.verify import verify_paths

    tab_entry(tmp_path / "subs", "baselines__identity")
    tab_entry(tmp_path / "subs", "baselines__regex-scrubber")
    lines: list[str] = []
    outcomes = verify_paths([tmp_path / "subs"], progress=lines.append)
    assert len(outcomes) == 2 and len(lines) == 2
    assert lines[0].startswith("verifying 1/2: ") and "baselines__identity" in lines[0] and "s so far" in lines[0]
    assert lines[1].startswith("verifying 2/2: ") and "baselines__regex-scrubber" in lines[1]
