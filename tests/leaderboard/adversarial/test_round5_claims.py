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
