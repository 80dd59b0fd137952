"""The refinement acceptance rule on constructed embeddings (Vendi score from the vendi-score package)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("vendi_score")

from privasis_bench.recipes.diversity import accept, delta_vendi, vendi  # noqa: E402


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=float)
    return v / np.linalg.norm(v)


def test_vendi_counts_distinct_directions():
    assert vendi(np.eye(4)) == pytest.approx(4.0)
    assert vendi(np.ones((5, 3))) == pytest.approx(1.0)


def test_a_revision_that_spreads_the_pool_gains_diversity():
    pool = np.vstack([_unit(1, 0, 0), _unit(0.9, 0.1, 0)])
    current = _unit(1, 0.05, 0)  # close to the pool
    new = _unit(0, 0, 1)  # orthogonal to it
    gain = delta_vendi(pool, current, new)
    assert gain > 0.5
    assert delta_vendi(pool, new, current) == 0.0  # never negative


def test_first_record_uses_one_minus_cosine():
    assert delta_vendi(None, _unit(1, 0), _unit(0, 1)) == pytest.approx(1.0)
    assert delta_vendi(np.empty((0, 2)), _unit(1, 0), _unit(1, 1)) == pytest.approx(1 - np.sqrt(0.5))


@pytest.mark.parametrize(
    "preference, gain, accepted",
    [(1.0, 0.3, True), (1.0, 0.0, False), (0.0, 0.9, False), (0.0, 1.2, True), (1.0, 1e-6, True), (1.0, 4e-7, False)],
)
def test_accept_iff_weighted_sum_exceeds_tau(preference: float, gain: float, accepted: bool):
    assert accept(preference, gain) is accepted


def test_rule_on_constructed_pool_end_to_end():
    pool = np.vstack([_unit(1, 0, 0, 0), _unit(0, 1, 0, 0)])
    same = _unit(1, 0, 0, 0)
    diverse = _unit(0, 0, 1, 0)
    assert accept(1.0, delta_vendi(pool, same, diverse))  # judge prefers it and diversity rises
    assert not accept(1.0, delta_vendi(pool, diverse, same))  # judge prefers it but diversity falls
    somewhat = _unit(1, 0, 0.6, 0)
    gain = delta_vendi(pool, same, somewhat)
    assert 0.0 < gain < 1.0
    assert accept(1.0, gain)
    assert not accept(0.0, gain)  # diversity rises a little but the judge prefers the current text
