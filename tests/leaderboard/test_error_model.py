"""Issue 33: the re-judge's sample size and pass rule follow the stated error model (10% disagreement caught >= 95%)."""

from __future__ import annotations

import random

import pytest

from privasis_bench.leaderboard.naming import folded, name_of_folder, submission_dir_name
from privasis_bench.leaderboard.rejudge import KINDS, Agreement, draw, sample_size


def test_sample_sizes_of_the_error_model():
    assert [sample_size(c) for c in (0, 1, 2)] == [29, 46, 61]
    assert 0.9**29 <= 0.05 < 0.9**28  # the smallest n that misses a 10% disagreement at most 5% of the time


def _pool(sizes: dict[str, int]) -> list[tuple[str, str, str, str]]:
    return [(kind, f"r{i}", "target" if kind.startswith("target") else "keep", f"{kind}-{i}")
            for kind, size in sizes.items() for i in range(size)]


@pytest.mark.parametrize("sizes,forged_kind,c", [
    ({"target:sanitized": 400, "target:proximity": 40, "keep:retained": 300, "keep:lost": 60, "target:inference": 20},
     "target:sanitized", 0),
    ({"target:sanitized": 400, "target:proximity": 82, "keep:retained": 300}, "target:proximity", 0),  # a rare kind
    ({"target:sanitized": 500, "keep:lost": 100}, None, 0),  # spread over every kind
    ({"target:sanitized": 500, "keep:lost": 100}, None, 1),
])
def test_a_ten_percent_forgery_is_rejected_at_least_95_percent_of_the_time(sizes, forged_kind, c):
    pool = _pool(sizes)
    rng = random.Random(7)
    candidates = [p for p in pool if forged_kind is None or p[0] == forged_kind]
    forged = set(rng.sample(candidates, -(-len(pool) // 10)))  # 10% of all judged attributes, rounded up
    n, trials, caught = sample_size(c), 2000, 0
    for trial in range(trials):
        chosen = draw(pool, n, random.Random(f"{trial}:entry"))
        differ = sum(item in forged for item in chosen)
        caught += not Agreement(pool=len(pool), asked=len(chosen), agreed=len(chosen) - differ,
                                max_disagreements=c).passed
    assert caught / trials >= 0.95, caught / trials


def test_every_decision_kind_can_be_drawn_and_an_honest_entry_passes():
    pool = _pool({"target:sanitized": 1000, "target:proximity": 1, "target:inference": 1, "keep:retained": 500,
                  "keep:lost": 1})
    chosen = draw(pool, 29, random.Random("any"))
    assert {c[0] for c in chosen} == set(KINDS) and len(chosen) >= 29
    assert Agreement(pool=len(pool), asked=len(chosen), agreed=len(chosen)).passed


def test_fresh_seeds_draw_different_samples_and_a_seed_repeats_its_sample():
    pool = _pool({"target:sanitized": 200, "keep:retained": 200})
    assert draw(pool, 29, random.Random("1:x")) == draw(pool, 29, random.Random("1:x"))
    assert draw(pool, 29, random.Random("1:x")) != draw(pool, 29, random.Random("2:x"))


def test_a_whole_small_pool_is_reasked_and_ten_percent_there_rejects():
    assert not Agreement(pool=10, asked=10, agreed=9, max_disagreements=1).passed  # 10% of a fully re-asked pool
    assert Agreement(pool=40, asked=40, agreed=39, max_disagreements=1).passed


@pytest.mark.parametrize("name", ["org/m:1", "org/m-1", "org/m+1", "Org.x/Model-2:b", "a_b/c.d"])
def test_the_name_to_folder_mapping_is_one_to_one_and_reversible(name):
    assert name_of_folder(submission_dir_name(name)) == name


def test_names_that_differ_only_by_case_punctuation_or_width_are_one_name():
    assert submission_dir_name("org/m:1") != submission_dir_name("org/m-1")
    assert folded("Org/Model-1") == folded("org/model_1") == folded("ORG/MODEL.1") == folded("ｏｒｇ/model1")
    assert folded("org/model1") != folded("org/model2")
