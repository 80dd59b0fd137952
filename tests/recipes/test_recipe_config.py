"""Recipe YAMLs: shipped recipes load, includes override, mistakes name the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from privasis_bench.errors import TaskConfigError
from privasis_bench.recipes.config import load_recipe, recipes_dir


@pytest.mark.parametrize("name", ["corpus", "synthesis", "decomp", "intact"])
def test_shipped_recipes_load_with_every_prompt(name: str):
    recipe = load_recipe(name)
    assert recipe.kind == name and recipe.recipe == name
    for key in recipe.prompts:
        assert recipe.prompt(key).strip()


def test_include_overrides_and_resolves_paths(tmp_path: Path):
    (tmp_path / "mine.txt").write_text("my {text}")
    child = tmp_path / "child.yaml"
    child.write_text(f"include: {recipes_dir() / 'corpus.yaml'}\nrecipe: child\nprompts: {{smooth: mine.txt}}\n"
                     "generation: {rewrite: {max_tokens: 99}}\ncorpus: {chunk_chars: 256}\n")
    recipe = load_recipe(child)
    assert recipe.recipe == "child" and recipe.corpus.chunk_chars == 256 and recipe.step("rewrite").max_tokens == 99
    assert recipe.prompt("smooth") == "my {text}" and recipe.prompt("rank") == load_recipe("corpus").prompt("rank")
    assert recipe.fingerprint() != load_recipe("corpus").fingerprint()


def test_unknown_key_names_file_and_key(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("recipe: x\nkind: corpus\nprompts: {}\ncorpus: {chunk_char: 100}\n")
    with pytest.raises(TaskConfigError, match=r"bad.yaml: corpus.chunk_char: unknown key"):
        load_recipe(bad)


def test_missing_prompt_file_is_reported(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("recipe: x\nkind: corpus\nprompts: {rank: nowhere.txt}\n")
    with pytest.raises(TaskConfigError, match=r"prompts.rank: file not found"):
        load_recipe(bad)
