"""Reading back the prompt templates a run recorded: only the text the run used, never a file outside the shipped
folders that a recorded name points at with ``..``."""

from __future__ import annotations

import hashlib

import pytest

from privasis_bench.tasks.paths import BUILTIN_PREFIX, builtin_tasks_dir
from privasis_bench.tasks.templates import TemplateMismatch, recorded_template


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_shipped_template_is_read_back_when_its_sha256_matches():
    text = (builtin_tasks_dir() / "prompts" / "judge_compare.txt").read_text(encoding="utf-8").removesuffix("\n")
    assert recorded_template("compare", f"{BUILTIN_PREFIX}prompts/judge_compare.txt", _sha(text)) == text
    with pytest.raises(TemplateMismatch, match="compare: .* is not the text the run used"):
        recorded_template("compare", f"{BUILTIN_PREFIX}prompts/judge_compare.txt", _sha(text + "!"))


def test_a_shipped_name_that_climbs_out_of_its_folder_is_refused(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("not a prompt", encoding="utf-8")
    climb = "../" * (len(builtin_tasks_dir().resolve().parts) + 2) + str(outside).lstrip("/")
    with pytest.raises(TemplateMismatch, match="not a file inside the shipped folder"):
        recorded_template("compare", BUILTIN_PREFIX + climb, _sha("not a prompt"))


@pytest.mark.parametrize("source", [None, "", {"name": "x"}, 7])
def test_a_missing_or_malformed_source_is_one_clear_refusal(source):
    with pytest.raises(TemplateMismatch, match="no source recorded"):
        recorded_template("compare", source, "0" * 64)
