"""Target sampling follows the sensitivity weights; keep attributes share no word with targets; schema shapes."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from privasis_bench.data.normalize import normalize_row
from privasis_bench.recipes.config import CorpusParams
from privasis_bench.recipes.targets import (
    Selection,
    Unit,
    choose_keep,
    keep_column,
    rank_weights,
    select_targets,
    selection_column,
    top_ranked,
    weighted_sample,
)


def test_rank_weights_follow_the_formula_and_unranked_share_the_last_rank():
    w = rank_weights(["a", "b"], ["a", "b", "c", "d"], floor=0.3)
    raw = {"a": 1.3, "b": 0.8, "c": 0.3 + 1 / 3, "d": 0.3 + 1 / 3}
    total = sum(raw.values())
    assert w == pytest.approx({k: v / total for k, v in raw.items()})


def test_top_two_thirds_kept_when_more_than_three():
    assert top_ranked(["d", "c"], ["a", "b", "c", "d", "e", "f"], 2 / 3) == ["d", "c", "a", "b"]
    assert top_ranked([], ["a", "b", "c"], 2 / 3) == ["a", "b", "c"]


def test_weighted_sampling_frequencies_follow_the_weights():
    names = ["a", "b", "c", "d", "e"]
    weights = rank_weights(names, names, 0.3)  # 1.3, 0.8, 0.633, 0.55, 0.5 (normalized)
    rng = np.random.default_rng(7)
    n = 20000
    counts = Counter(weighted_sample(names, weights, 1, rng)[0] for _ in range(n))
    observed = [counts[k] for k in names]
    expected = [weights[k] * n for k in names]
    assert chisquare(observed, expected).pvalue > 0.001
    # and not uniform: the reference script's bug would make this pass
    assert chisquare(observed, [n / 5] * 5).pvalue < 1e-6


def test_weighted_sampling_is_without_replacement():
    names = list("abcdefgh")
    weights = rank_weights(names, names)
    rng = np.random.default_rng(1)
    for _ in range(200):
        got = weighted_sample(names, weights, 5, rng)
        assert len(set(got)) == 5


ATTRS = {"full_name": "Lena Okafor", "phone": "+1 555 0142", "visit_date": "March 14, 2024", "clinic": "Elm Street Clinic",
         "doctor": "Dr. Amir Haddad", "diagnosis": "seasonal allergies", "city": "Porto"}
GROUPS = {"Patient": {"full_name": "Lena Okafor", "phone": "+1 555 0142"},
          "Visit": {"visit_date": "March 14, 2024", "clinic": "Elm Street Clinic", "doctor": "Dr. Amir Haddad"},
          "Health": {"diagnosis": "seasonal allergies"}}


def _row(sel: Selection, keep: list[Unit]) -> dict:
    return {"id": "r1", "original_record": "text", "base_instruction": "- x", "smoothed_instruction": "x",
            "attributes_to_abstract": selection_column(sel.abstract, sel.abstract_group),
            "attributes_to_drop": selection_column(sel.drop, sel.drop_group),
            "attributes_to_keep": keep_column(keep, GROUPS), "grouped_annotated_attributes": GROUPS}


@pytest.mark.parametrize("seed", range(40))
def test_selection_shapes_match_the_benchmark_schema(seed: int):
    rng = np.random.default_rng(seed)
    sel = select_targets(ATTRS, GROUPS, {"attributes": ["full_name"], "groups": ["Patient"]}, CorpusParams(), rng)
    keep = choose_keep(sel, ATTRS, CorpusParams(), rng)
    row = _row(sel, keep)
    for column, units, as_group in (("attributes_to_abstract", sel.abstract, sel.abstract_group),
                                    ("attributes_to_drop", sel.drop, sel.drop_group)):
        selected = row[column]["selected"]
        if not units:
            assert selected is None
        elif as_group:
            assert isinstance(selected, list) and all(set(g) == {"attrs", "group_name"} for g in selected)
            assert {g["group_name"] for g in selected} <= set(GROUPS)
        else:
            assert isinstance(selected, dict) and set(selected) <= set(ATTRS)
    assert sel.targets(), "every row gets at least one target"
    record = normalize_row(row, row_number=0)
    names = [a.name for a in record.targets]
    assert len(names) == len(set(names)), "a chosen attribute never appears twice"
    assert not {a.name for a in record.keep} & set(names)


def test_both_selection_modes_occur():
    modes = Counter()
    for seed in range(60):
        sel = select_targets(ATTRS, GROUPS, {}, CorpusParams(), np.random.default_rng(seed))
        modes[sel.abstract_group] += 1
    assert modes[True] and modes[False]


def test_keep_attributes_share_no_word_with_targets():
    sel = Selection(abstract=[Unit("clinic", {"clinic": "Elm Street Clinic"}, False)],
                    drop=[Unit("full_name", {"full_name": "Lena Okafor"}, False)])
    attrs = {"full_name": "Lena Okafor", "clinic": "Elm Street Clinic", "street": "Elm Street",
             "mother": "Ada Okafor", "city": "Porto", "phone": "+1 555 0142"}
    for seed in range(30):
        keep = choose_keep(sel, attrs, CorpusParams(), np.random.default_rng(seed))
        assert 1 <= len(keep) <= 2
        assert {u.name for u in keep} <= {"city", "phone"}


def test_no_candidate_means_no_keep_attributes():
    sel = Selection(drop=[Unit("full_name", {"full_name": "Lena Okafor"}, False)])
    assert choose_keep(sel, {"full_name": "Lena Okafor", "alias": "Lena"}, CorpusParams(), np.random.default_rng(0)) == []
