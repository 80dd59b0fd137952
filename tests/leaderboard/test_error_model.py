"""Issues 33 and 41: the re-judge's sample size and pass rule follow the stated error model (an entry with 5% of its
judged decisions forged passes one run with probability below 1%; the allowance excuses only unstable decisions)."""

from __future__ import annotations

import random

import pytest

from privasis_bench.leaderboard.naming import folded, name_of_folder, submission_dir_name
from privasis_bench.leaderboard.rejudge import KINDS, Agreement, draw, pass_probability, sample_size


def test_sample_size_of_the_error_model():
    assert sample_size() == 90
    assert 0.95**90 < 0.01 <= 0.95**89  # the smallest n that lets a 5% forgery pass below 1% of the time
    assert pass_probability(90, 0.05) < 0.01 and pass_probability(90, 0.10) < 0.0001
    assert sample_size(0.10, 0.95) == 29  # the previous model (10% caught >= 95%) for comparison


def _pool(sizes: dict[str, int]) -> list[tuple[str, str, str, str]]:
    return [(kind, f"r{i}", "target" if kind.startswith("target") else "keep", f"{kind}-{i}")
            for kind, size in sizes.items() for i in range(size)]


@pytest.mark.parametrize("sizes,forged_kind,c", [
    ({"target:sanitized": 400, "target:proximity": 40, "keep:retained": 300, "keep:lost": 60, "target:inference": 20},
     "target:sanitized", 0),
    ({"target:sanitized": 400, "target:proximity": 82, "keep:retained": 300}, "target:proximity", 0),  # a rare kind
    ({"target:sanitized": 500, "keep:lost": 100}, None, 0),  # spread over every kind
    ({"target:sanitized": 500, "keep:lost": 100}, None, 2),  # the allowance CI uses changes nothing for firm ones
])
def test_a_five_percent_forgery_passes_one_run_below_one_percent_of_the_time(sizes, forged_kind, c):
    pool = _pool(sizes)
    rng = random.Random(7)
    candidates = [p for p in pool if forged_kind is None or p[0] == forged_kind]
    forged = set(rng.sample(candidates, -(-len(pool) // 20)))  # 5% of all judged attributes, rounded up
    n, trials, passed = sample_size(), 4000, 0
    for trial in range(trials):
        chosen = draw(pool, n, random.Random(f"{trial}:entry"))
        differ = sum(item in forged for item in chosen)  # a forged decision is firm: the judge repeats its own answer
        passed += Agreement(pool=len(pool), asked=len(chosen), agreed=len(chosen) - differ,
                            max_disagreements=c).passed
    assert passed / trials < 0.01, passed / trials


def test_the_allowance_excuses_only_unstable_disagreements():
    # a small pool re-asked whole: 2 forged (firm) decisions never pass, whatever --max-disagreements says
    assert not Agreement(pool=34, asked=34, agreed=32, max_disagreements=2).passed
    assert Agreement(pool=34, asked=34, agreed=32, unstable=2, max_disagreements=2).passed
    assert not Agreement(pool=34, asked=34, agreed=31, unstable=3, max_disagreements=2).passed
    assert not Agreement(pool=34, asked=34, agreed=31, unstable=2, max_disagreements=2).passed  # one firm among them


def test_every_decision_kind_can_be_drawn_and_an_honest_entry_passes():
    pool = _pool({"target:sanitized": 1000, "target:proximity": 1, "target:inference": 1, "keep:retained": 500,
                  "keep:lost": 1})
    chosen = draw(pool, sample_size(), random.Random("any"))
    assert {c[0] for c in chosen} == set(KINDS) and len(chosen) >= sample_size()
    assert Agreement(pool=len(pool), asked=len(chosen), agreed=len(chosen)).passed


def test_fresh_seeds_draw_different_samples_and_a_seed_repeats_its_sample():
    pool = _pool({"target:sanitized": 200, "keep:retained": 200})
    assert draw(pool, 29, random.Random("1:x")) == draw(pool, 29, random.Random("1:x"))
    assert draw(pool, 29, random.Random("1:x")) != draw(pool, 29, random.Random("2:x"))


def test_a_whole_small_pool_is_reasked_and_ten_percent_there_rejects():
    assert not Agreement(pool=10, asked=10, agreed=9, max_disagreements=1).passed  # 10% of a fully re-asked pool
    assert Agreement(pool=40, asked=40, agreed=39, unstable=1, max_disagreements=1).passed
    assert not Agreement(pool=40, asked=40, agreed=39, max_disagreements=1).passed  # a firm one never passes


@pytest.mark.parametrize("name", ["org/m:1", "org/m-1", "org/m+1", "Org.x/Model-2:b", "a_b/c.d"])
def test_the_name_to_folder_mapping_is_one_to_one_and_reversible(name):
    assert name_of_folder(submission_dir_name(name)) == name


def test_names_that_differ_only_by_case_punctuation_or_width_are_one_name():
    assert submission_dir_name("org/m:1") != submission_dir_name("org/m-1")
    assert folded("Org/Model-1") == folded("org/model_1") == folded("ORG/MODEL.1") == folded("ｏｒｇ/model1")
    assert folded("org/model1") != folded("org/model2")
