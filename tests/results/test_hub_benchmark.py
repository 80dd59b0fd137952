"""The eval.yaml for Privasis-Zero: generated from the shipped tasks, checked against the Hub's field list."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from privasis_bench.results.hub_benchmark import check_eval_yaml, privasis_zero_eval_yaml

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "hub" / "privasis-zero.eval.yaml"


def test_the_committed_file_is_what_the_generator_writes():
    assert COMMITTED.read_text(encoding="utf-8") == privasis_zero_eval_yaml(), (
        "docs/hub/privasis-zero.eval.yaml is stale: regenerate it with privasis_zero_eval_yaml()")


def test_it_names_both_test_sets_as_inspect_tasks_with_the_pinned_configs():
    spec = check_eval_yaml(COMMITTED.read_text(encoding="utf-8"))
    assert spec.evaluation_framework == "inspect-ai"
    assert [(t.id, t.config, t.split) for t in spec.tasks] == [("privasis_vanilla", "vanilla", "test"),
                                                               ("privasis_hard", "hard", "test")]
    assert spec.tasks[0].solvers[0]["name"] == "privasis_bench/privasis_vanilla"


@pytest.mark.slow
def test_the_inspect_tasks_it_names_exist():
    pytest.importorskip("inspect_ai")
    from privasis_bench.interop import inspect_task

    spec = check_eval_yaml(COMMITTED.read_text(encoding="utf-8"))
    for task in spec.tasks:
        assert callable(getattr(inspect_task, task.solvers[0]["name"].split("/", 1)[1]))
        assert callable(getattr(inspect_task, task.scorers[0]["name"].split("/", 1)[1]))


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(evaluation_framework="lm-eval"), "evaluation_framework"),
    (lambda d: d.update(leaderboard=True), "leaderboard"),
    (lambda d: d["tasks"][0].pop("id"), "id"),
    (lambda d: d.update(tasks=[]), "tasks"),
])
def test_a_file_off_the_field_list_is_refused_naming_the_field(change, field):
    data = yaml.safe_load(COMMITTED.read_text(encoding="utf-8"))
    change(data)
    with pytest.raises(ValidationError, match=field):
        check_eval_yaml(yaml.safe_dump(data))
